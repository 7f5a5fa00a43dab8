#!/usr/bin/env bash
# Issue 17 class 3: a job that never uses the GPU (a forgotten --cuda flag). The estimate
# still "fits", but says it is the CUDA context alone: a warning line on stderr, uses_gpu
# false and fits_reason in the JSON, 0 B allocated. Fast mode does not crash on it: it
# names the cause (exit 3) and auto mode falls back to the exact capture.
set -u
. "$(dirname "$0")/30-estimate-common.bash"
[ -x "$bin/xmem-estimate" ] || { echo "xmem-estimate not built in $XMEM_BUILD"; exit 77; }
[ -x "$bin/xmem-profile" ] || { echo "xmem-profile not built yet: nothing to profile with"; exit 77; }
job=(/usr/bin/python3 "$XMEM_SRC/tests/workloads/issue_classes.py" --no-cuda)

echo "+ xmem-estimate --json -- ${job[*]}"
"$bin/xmem-estimate" --json -- "${job[@]}" >"$tmp/auto.json" 2>"$tmp/auto.err" ||
    { echo "FAIL: the estimate failed:"; tail -n 20 "$tmp/auto.err"; exit 1; }
check_consistent "$tmp/auto.json"
check "$tmp/auto.json" "j['allocated_peak_bytes'] == 0" "no GPU tensors: 0 B allocated"
check "$tmp/auto.json" "j['uses_gpu'] is False" "uses_gpu false"
check "$tmp/auto.json" "'CUDA context alone' in j['fits_reason']" "fits_reason says what fits means"
check "$tmp/auto.json" "len(j['warnings']) == 1 and '--cuda' in j['warnings'][0]" "the warning is in the JSON"
grep -q '^xmem: warning: the job made no GPU tensors' "$tmp/auto.err" ||
    { echo "FAIL: no warning line on stderr:"; cat "$tmp/auto.err"; fails=$((fails + 1)); }
if [ -x "$bin/xmem-profile-fast" ]; then
    grep -q '^xmem: fast mode: unsupported: .*no GPU tensors' "$tmp/auto.err" ||
        { echo "FAIL: fast mode did not name the cause:"; cat "$tmp/auto.err"; fails=$((fails + 1)); }
    grep -q 'Expected all tensors to be on the same device' "$tmp/auto.err" &&
        { echo "FAIL: fast mode crashed with a device mismatch"; fails=$((fails + 1)); }
fi
# The human report says it too, on the fits line.
"$bin/xmem-estimate" --mode exact -- "${job[@]}" >"$tmp/human.out" 2>/dev/null ||
    { echo "FAIL: the human estimate failed"; fails=$((fails + 1)); }
grep -q '^fits: yes, but only as the CUDA context alone' "$tmp/human.out" ||
    { echo "FAIL: the fits line does not say what it means:"; cat "$tmp/human.out"; fails=$((fails + 1)); }
finish
