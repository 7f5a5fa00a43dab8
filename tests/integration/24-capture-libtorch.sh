#!/usr/bin/env bash
# The native path: a TorchScript module saved by torch.jit.script plus a YAML job spec,
# captured by xmem-profile-libtorch; parameters and buffers accounted exactly at iteration 0.
source "$(dirname "$0")/20-capture-common.bash"
RUNNER=$XMEM_BUILD/bin/xmem-profile-libtorch
[ -x "$RUNNER" ] || { echo "xmem-profile-libtorch not built"; exit 77; }

params=$($PY "$WORKLOADS/torchscript_job.py" "$TMP/job" --optimizer adam)
run "$RUNNER" "$TMP/job/job.yaml" --out "$TMP/ts.trace" --steps 4
run $CHECK "$TMP/ts.trace" --steps 4 --phases-in-order --min-setup-gpu-bytes "$params" >/dev/null
expect "$TMP/ts.trace" "iteration 0 leaves exactly the parameters and buffers on the device" \
    's["per_iteration"]["0"]["gpu_live_delta"] == '"$params"
expect "$TMP/ts.trace" "Adam state (two moments) and gradients appear in iteration 1" \
    's["per_iteration"]["1"]["gpu_live_delta"] >= 2 * '"$params"
expect "$TMP/ts.trace" "steady iterations free what they allocate" \
    'all(s["per_iteration"][str(i)]["allocs"] == s["per_iteration"][str(i)]["frees"] for i in (2, 3, 4))'
grep -q '^M runner libtorch$' "$TMP/ts.trace" || { echo "FAILED: runner metadata"; exit 1; }

# Bad input is one line naming the thing and the fix.
sed 's/loss: cross_entropy/loss: hinge/' "$TMP/job/job.yaml" >"$TMP/job/bad.yaml"
rc=0; "$RUNNER" "$TMP/job/bad.yaml" --out "$TMP/bad.trace" 2>"$TMP/err" || rc=$?
cat "$TMP/err"
[ "$rc" -eq 1 ] && grep -q "^xmem: $TMP/job/bad.yaml:[0-9]*: loss: invalid value: hinge" "$TMP/err" \
    || { echo "FAILED: bad loss not reported"; exit 1; }
sed 's/shape: \[3, 32, 32\]/shape: [5, 32, 32]/' "$TMP/job/job.yaml" >"$TMP/job/wrong.yaml"
rc=0; "$RUNNER" "$TMP/job/wrong.yaml" --out "$TMP/wrong.trace" 2>"$TMP/err" || rc=$?
cat "$TMP/err"
[ "$rc" -eq 1 ] && grep -q "do the job spec's inputs and target match the module" "$TMP/err" \
    || { echo "FAILED: shape mismatch not reported"; exit 1; }
[ ! -e "$TMP/wrong.trace" ] || { echo "FAILED: a trace was left after a failed run"; exit 1; }
echo "ok: libtorch runner"
