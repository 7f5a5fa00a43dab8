#!/usr/bin/env bash
# The native path: a TorchScript module saved by torch.jit.script plus a YAML job spec,
# captured by xmem-profile-libtorch; parameters and buffers accounted exactly at iteration 0.
source "$(dirname "$0")/20-capture-common.bash"
RUNNER=$XMEM_BUILD/bin/xmem-profile-libtorch
[ -x "$RUNNER" ] || { echo "xmem-profile-libtorch not built"; exit 77; }

params=$($PY "$WORKLOADS/torchscript_job.py" "$TMP/job" --optimizer adam)
run_ok "$RUNNER" "$TMP/job/job.yaml" --out "$TMP/ts.trace" --steps 4
run_ok $CHECK "$TMP/ts.trace" --steps 4 --phases-in-order --min-setup-gpu-bytes "$params" >/dev/null
expect_trace "$TMP/ts.trace" \
    's["per_iteration"]["0"]["gpu_live_delta"] == '"$params" \
    "iteration 0 leaves exactly the parameters and buffers on the device"
expect_trace "$TMP/ts.trace" \
    's["per_iteration"]["1"]["gpu_live_delta"] >= 2 * '"$params" \
    "Adam state (two moments) and gradients appear in iteration 1"
expect_trace "$TMP/ts.trace" \
    'all(s["per_iteration"][str(i)]["allocs"] == s["per_iteration"][str(i)]["frees"] for i in (2, 3, 4))' \
    "steady iterations free what they allocate"
expect_true "runner metadata" grep -q '^M runner libtorch$' "$TMP/ts.trace"

# Bad input is one line naming the thing and the fix.
sed 's/loss: cross_entropy/loss: hinge/' "$TMP/job/job.yaml" >"$TMP/job/bad.yaml"
rc=0; "$RUNNER" "$TMP/job/bad.yaml" --out "$TMP/bad.trace" 2>"$TMP/err" || rc=$?
cat "$TMP/err"
expect_eq "$rc" 1 "bad loss: exit status"
expect_true "bad loss not reported" grep -q "^xmem: $TMP/job/bad.yaml:[0-9]*: loss: invalid value: hinge" "$TMP/err"
sed 's/shape: \[3, 32, 32\]/shape: [5, 32, 32]/' "$TMP/job/job.yaml" >"$TMP/job/wrong.yaml"
rc=0; "$RUNNER" "$TMP/job/wrong.yaml" --out "$TMP/wrong.trace" 2>"$TMP/err" || rc=$?
cat "$TMP/err"
expect_eq "$rc" 1 "shape mismatch: exit status"
expect_true "shape mismatch not reported" grep -q "do the job spec's inputs and target match the module" "$TMP/err"
expect_true "a trace was left after a failed run" [ ! -e "$TMP/wrong.trace" ]
echo "ok: libtorch runner"
