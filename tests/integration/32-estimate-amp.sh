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
    run_to "$tmp/$mode.json" "$bin/xmem-estimate" --mode exact --torch 2.1 --json -- "${job[@]}" "${extra[@]}"
    expect_rc 0 "$mode run" || finish
    check_consistent "$tmp/$mode.json"
done
expect_json "$tmp/fp32.json" "j['amp'] == 'off'" "fp32 run says amp off"
expect_json "$tmp/amp.json" "j['amp'] in ('fp16', 'bf16')" "AMP run says amp"
fp32=$(json "$tmp/fp32.json" "j['category_peak_bytes']['activations']")
amp=$(json "$tmp/amp.json" "j['category_peak_bytes']['activations']")
echo "activation term: fp32 $fp32 B, amp $amp B"
expect_true "AMP activations ($amp) below fp32 ($fp32)" [ "$amp" -lt "$fp32" ]
# Same parameters either way: weights and gradients do not change with autocast.
w32=$(json "$tmp/fp32.json" "j['category_peak_bytes']['weights']")
wamp=$(json "$tmp/amp.json" "j['category_peak_bytes']['weights']")
expect_eq "$wamp" "$w32" "AMP weights are fp32's"
finish
