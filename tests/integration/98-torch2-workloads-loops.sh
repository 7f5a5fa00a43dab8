#!/usr/bin/env bash
# Training loops xmem cannot take for granted, torch 2.x from the venv on PATH:
# - word_lm.py updates parameters by hand without torch.optim (pytorch/examples'
#   word_language_model): estimated, or refused at once with one line that names the
#   construct and the fix (not a step timeout);
# - torch.compile: estimated (as eager, with a warning naming torch.compile), or refused
#   with one such line.
source "$(dirname "$0")/96-torch2-workloads-common.bash"

# estimated_or_named MODE NAME PATTERN SCRIPT ARGS...: either the workload checks out (see
# workload), or xmem-estimate failed with exactly one "xmem:" stderr line matching PATTERN,
# within 60 s (a refusal, not a wait for steps that never come).
estimated_or_named() {
    local mode=$1 name=$2 pattern=$3 start rc=0
    shift 3
    start=$(date +%s)
    XMEM_TEST_STEP_TIMEOUT=60 estimate "$mode" "$name" "$@" || rc=$?
    if [ $rc -eq 0 ]; then
        checked "$mode" "$name" "$@" || return 0
        if grep -qiE "^xmem: warning: .*($pattern)" "$TMP/$name-$mode.err"; then
            echo "     (warned: $(grep -m1 -iE "^xmem: warning: .*($pattern)" "$TMP/$name-$mode.err"))"
        fi
        return 0
    fi
    local lines secs=$(($(date +%s) - start))
    lines=$(grep -c '^xmem:' "$TMP/$name-$mode.err")
    RUN_OUT=$(tail -n 5 "$TMP/$name-$mode.err") # what a failed check shows
    expect_eq "$lines" 1 "$mode $name: exit $rc after ${secs}s: 'xmem:' lines" &&
        expect_true "$mode $name: exit $rc: no 'xmem:' line naming /$pattern/" \
            grep -qiE "^xmem: .*($pattern)" "$TMP/$name-$mode.err" &&
        expect_true "$mode $name: refused after ${secs}s, not at once" [ $secs -lt 60 ] &&
        echo "ok   $mode $name: refused in ${secs}s: $(grep '^xmem:' "$TMP/$name-$mode.err")"
}

for mode in fast exact; do
    estimated_or_named $mode word-lm 'optim|step|iteration' word_lm.py --steps 6
done
# word_lm's fast and exact estimates agree: test 94.
for mode in fast exact; do
    estimated_or_named $mode compile 'compile' vision.py --model resnet18 --image-size 64 --classes 10 --compile
done
finish
