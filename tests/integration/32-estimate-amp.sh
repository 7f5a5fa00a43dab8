#!/usr/bin/env bash
# Mixed precision: the same small GPT trained with autocast + GradScaler has a smaller
# activation term than in fp32 (2-byte activations), and its JSON says amp.
set -u
. "$(dirname "$0")/30-estimate-common.bash"
[ -x "$bin/xmem-estimate" ] || { echo "xmem-estimate not built in $XMEM_BUILD"; exit 77; }
[ -x "$bin/xmem-profile" ] || { echo "xmem-profile not built yet: nothing to profile with"; exit 77; }
job=(/usr/bin/python3 "$XMEM_SRC/tests/workloads/transformer.py" --arch gpt --layers 2 --hidden 128
     --heads 4 --seq 128 --vocab 1000 --batch-size 8 --steps-per-epoch 3)
for mode in fp32 amp; do
    extra=(); [ "$mode" = amp ] && extra=(--amp)
    echo "+ xmem-estimate --json -- ${job[*]} ${extra[*]}"
    "$bin/xmem-estimate" --mode exact --torch 2.1 --json -- "${job[@]}" "${extra[@]}" >"$tmp/$mode.json" 2>"$tmp/$mode.err" ||
        { echo "FAIL: $mode run failed:"; tail -n 20 "$tmp/$mode.err"; exit 1; }
    check_consistent "$tmp/$mode.json"
done
check "$tmp/fp32.json" "j['amp'] == 'off'" "fp32 run says amp off"
check "$tmp/amp.json" "j['amp'] in ('fp16', 'bf16')" "AMP run says amp"
fp32=$(json "$tmp/fp32.json" "j['category_peak_bytes']['activations']")
amp=$(json "$tmp/amp.json" "j['category_peak_bytes']['activations']")
echo "activation term: fp32 $fp32 B, amp $amp B"
[ "$amp" -lt "$fp32" ] || { echo "FAIL: AMP activations ($amp) not below fp32 ($fp32)"; fails=$((fails + 1)); }
# Same parameters either way: weights and gradients do not change with autocast.
w32=$(json "$tmp/fp32.json" "j['category_peak_bytes']['weights']")
wamp=$(json "$tmp/amp.json" "j['category_peak_bytes']['weights']")
[ "$w32" = "$wamp" ] || { echo "FAIL: weights differ ($w32 vs $wamp)"; fails=$((fails + 1)); }
finish
