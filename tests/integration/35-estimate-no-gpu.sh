#!/usr/bin/env bash
# Issue 17 class 3: a job that never uses the GPU (a forgotten --cuda flag). The estimate
# still "fits", but says it is the CUDA context alone: a warning line on stderr, uses_gpu
# false and fits_reason in the JSON, 0 B allocated. Fast mode runs it too (the host model
# meets host data on meta copies) and gives the same warning (issue 33 item 3).
set -u
. "$(dirname "$0")/30-estimate-common.bash"
[ -x "$bin/xmem-estimate" ] || { echo "xmem-estimate not built in $XMEM_BUILD"; exit 77; }
[ -x "$bin/xmem-profile" ] || { echo "xmem-profile not built yet: nothing to profile with"; exit 77; }
job=(/usr/bin/python3 "$XMEM_SRC/tests/workloads/issue_classes.py" --no-cuda)

run_to "$tmp/auto.json" "$bin/xmem-estimate" --json -- "${job[@]}"
expect_rc 0 "the estimate" || finish
check_consistent "$tmp/auto.json"
expect_json "$tmp/auto.json" "j['allocated_peak_bytes'] == 0" "no GPU tensors: 0 B allocated"
expect_json "$tmp/auto.json" "j['uses_gpu'] is False" "uses_gpu false"
expect_json "$tmp/auto.json" "'CUDA context alone' in j['fits_reason']" "fits_reason says what fits means"
expect_json "$tmp/auto.json" "len(j['warnings']) == 1 and '--cuda' in j['warnings'][0]" "the warning is in the JSON"
# RUN_OUT: the estimate's stderr.
expect_out '^xmem: warning: the job made no GPU tensors' "a warning line on stderr"
if [ -x "$bin/xmem-profile-fast" ]; then
    expect_json "$tmp/auto.json" "j['mode'] == 'fast'" "fast mode estimates it (no fall back)"
    expect_no_out 'Expected all tensors to be on the same device' "fast mode crashed with a device mismatch"
fi
# The human report says it too, on the fits line.
run_to "$tmp/human.out" "$bin/xmem-estimate" --mode exact -- "${job[@]}"
expect_rc 0 "the human estimate"
log_watch "$tmp/human.out"
expect_true "the fits line says what it means" grep -q '^fits: yes, but only as the CUDA context alone' "$tmp/human.out"
finish
