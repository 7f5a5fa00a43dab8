#!/usr/bin/env bash
# Issue 33 item 1: every way a model's weights reach the GPU is in fast mode's trace. For
# transformers' from_pretrained(device_map="cuda") (its loader moves the checkpoint's tensors
# in a thread pool), accelerate's dispatch, to_empty, load_state_dict(assign=True) of
# torch.load(map_location="cuda") and safetensors' load_file(device="cuda"), the estimate's
# breakdown.weights from the fast trace equals the exact capture's. Before this, fast mode
# gave from_pretrained 0 B of weights (the loader threads' copies went untraced) and refused
# nothing; safetensors failed asking to pin memory. The weights check after the first step
# (xmem_fast/weights.py) refuses a way still untraced: weights computed on the GPU in a
# thread pool (`threaded`) are refused in one line (exit 3), not estimated without them; it
# also refuses from_pretrained with the thread pool's copies unrecorded (checked by hand).
source "$(dirname "$0")/90-fast-torch2-common.bash"
script=$WORKLOADS/torch2/weights_on_gpu.py
export HF_HUB_OFFLINE=1
# The checkpoints, written by plain Python (fast mode has no values to save).
"$VPY" "$script" save "$TMP" >"$TMP/save.out" 2>&1 || { cat "$TMP/save.out"; fail "saving the checkpoints"; }
# weights_of TRACE: breakdown.weights of the estimate from TRACE.
weights_of() {
    "$XMEM_BUILD/bin/xmem-estimate" --json --gpu H100-80GB --trace-in "$1" >"$1.json" 2>/dev/null ||
        { echo "estimate of $1 failed"; return 1; }
    field_of "$1.json" breakdown.weights
}
for way in from_pretrained dispatch to_empty assign safetensors; do
    for capture in fast exact; do
        profiler=$FAST
        [ "$capture" = exact ] && profiler=$XMEM_BUILD/bin/xmem-profile
        run "$profiler" --python "$VPY" --out "$TMP/$way-$capture.trace" --steps 2 --timeout 300 -- \
            python "$script" "$way" "$TMP"
        printf '%s\n' "$RUN_OUT" >"$TMP/out"
        expect_rc 0 "$way, $capture capture"
    done
    fast=$(weights_of "$TMP/$way-fast.trace") exact=$(weights_of "$TMP/$way-exact.trace")
    expect_true "$way: no weights in the exact estimate" [ "${exact:-0}" -gt 1000000 ]
    expect_eq "$fast" "$exact" "$way: fast mode's weights (B) against the exact capture's"
    echo "$way: weights fast $fast B, exact $exact B"
done
run "$FAST" --python "$VPY" --out "$TMP/threaded.trace" --steps 2 --timeout 300 -- \
    python "$script" threaded "$TMP"
expect_rc 3 "weights made on the GPU by a thread fast mode does not trace"
expect_out "^xmem: fast mode: unsupported: weights missing from the trace: [0-9]+ parameter\(s\) on the GPU .* at [^ ]*weights_on_gpu.py:[0-9]+; use --mode exact" \
    "the weights check's one line"
finish
