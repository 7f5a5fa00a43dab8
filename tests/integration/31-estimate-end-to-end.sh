#!/usr/bin/env bash
# `xmem estimate` end to end: the dispatcher runs xmem-estimate, which profiles a small
# GPT-like training script on the CPU with xmem-profile and prints a consistent estimate;
# --keep-trace keeps the capture and --trace-in on it gives the same numbers; a small CNN gets
# cuDNN workspaces from its K records.
set -u
. "$(dirname "$0")/30-estimate-common.bash"
[ -x "$bin/xmem-estimate" ] || { echo "xmem-estimate not built in $XMEM_BUILD"; exit 77; }
[ -x "$bin/xmem-profile" ] || { echo "xmem-profile not built yet: nothing to profile with"; exit 77; }
job=(/usr/bin/python3 "$XMEM_SRC/tests/workloads/transformer.py" --arch gpt --layers 2 --hidden 128
     --heads 4 --seq 128 --vocab 1000 --batch-size 8 --steps-per-epoch 3)

run_to "$tmp/gpt.json" "$bin/xmem" estimate --mode exact --gpu A100-40GB --torch 2.1 --json \
    --keep-trace "$tmp/gpt.xtrace" --timeline "$tmp/gpt.html" -- "${job[@]}"
expect_rc 0 "xmem estimate of a small GPT" || finish
check_consistent "$tmp/gpt.json"
expect_json "$tmp/gpt.json" "j['iterations'] == 3" "three optimizer steps captured"
expect_json "$tmp/gpt.json" "j['profile_seconds'] > 0 and j['analyze_seconds'] < 5" "profile and analysis timed"
expect_json "$tmp/gpt.json" "j['fits'] is True" "a small GPT fits an A100"
expect_json "$tmp/gpt.json" "j['torch_version'].startswith('1.13') and j['python'] == '/usr/bin/python3'" "the job's torch and interpreter recorded"
expect_json "$tmp/gpt.json" "j['torch'] == '2.1' and not j['torch_newer_than_known']" "an explicit --torch wins over the job's"
expect_json "$tmp/gpt.json" "j['corrections']['cublas_workspaces'] == 2" "two cuBLAS handles (forward, autograd)"
expect_json "$tmp/gpt.json" "all(j['breakdown'][k] > 0 for k in ('weights', 'workspaces', 'cuda_context'))" "weights, workspaces and context in the breakdown"
expect_json "$tmp/gpt.json" "j['category_peak_bytes']['gradients'] > 0 and j['category_peak_bytes']['optimizer_state'] > 0" "gradients and optimizer state seen"
expect_json "$tmp/gpt.json" "j['steady_reserved_peak_bytes'] >= j['first_iteration_reserved_peak_bytes']" "steady iterations reported"
expect_true "a timeline page" grep -q '<svg' "$tmp/gpt.html"

# The kept trace gives the same estimate without profiling again.
"$bin/xmem-estimate" --gpu A100-40GB --torch 2.1 --json --trace-in "$tmp/gpt.xtrace" >"$tmp/again.json"
a=$(json "$tmp/gpt.json" "j['peak_bytes']"); b=$(json "$tmp/again.json" "j['peak_bytes']")
expect_eq "$b" "$a" "--trace-in gives the profiled run's peak"

# Convolutions: the capture's K records give cuDNN workspaces, and the limit covers their
# bound (docs/estimate.md, "cuDNN workspaces"); the same trace without its K records has none.
cnn=(/usr/bin/python3 "$XMEM_SRC/tests/workloads/vision.py" --model resnet18 --batch-size 4
     --image-size 64 --classes 10 --steps-per-epoch 3)
run_to "$tmp/cnn.json" "$bin/xmem-estimate" --mode fast --gpu A100-40GB --torch 2.1 --json \
    --keep-trace "$tmp/cnn.xtrace" -- "${cnn[@]}"
expect_rc 0 "xmem estimate of resnet18" || finish
check_consistent "$tmp/cnn.json"
expect_json "$tmp/cnn.json" "j['corrections']['cudnn_workspaces'] > 0 and j['workspace_bound_peak_bytes'] > 0" "cuDNN workspaces from K records"
expect_json "$tmp/cnn.json" "j['limit_bytes'] >= max(j['peak_bytes'], j['workspace_bound_peak_bytes'])" "the limit covers the workspace bound"
grep -v '^K ' "$tmp/cnn.xtrace" >"$tmp/nok.xtrace"
"$bin/xmem-estimate" --gpu A100-40GB --torch 2.1 --json --trace-in "$tmp/nok.xtrace" >"$tmp/nok.json"
expect_json "$tmp/nok.json" "j['corrections']['cudnn_workspaces'] == 0 and j['workspace_bound_peak_bytes'] == 0" "no K records, no workspaces"

# A job that fails is reported as such: the profiler's own line, then xmem-estimate's.
expect 2 'profiling the job failed' "$bin/xmem-estimate" -- /usr/bin/python3 -c 'raise SystemExit(3)'
expect_true "the last stderr line is xmem-estimate's" \
    grep -q '^xmem: profiling the job failed (xmem-profile exit status 1)' <(tail -n 1 "$tmp/err")
finish
