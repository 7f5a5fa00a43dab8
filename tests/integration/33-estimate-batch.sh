#!/usr/bin/env bash
# A larger batch gives a larger estimate: the same small CNN at batch 2 and batch 8 (the
# activation term and the reserved peak grow; weights stay).
set -u
. "$(dirname "$0")/30-estimate-common.bash"
[ -x "$bin/xmem-estimate" ] || { echo "xmem-estimate not built in $XMEM_BUILD"; exit 77; }
[ -x "$bin/xmem-profile" ] || { echo "xmem-profile not built yet: nothing to profile with"; exit 77; }
for batch in 2 8; do
    job=(/usr/bin/python3 "$XMEM_SRC/tests/workloads/vision.py" --model mobilenet_v2 --batch-size "$batch"
         --image-size 64 --classes 10 --steps-per-epoch 3)
    run_to "$tmp/b$batch.json" "$bin/xmem-estimate" --mode exact --gpu RTX3060-12GB --torch 2.1 --json -- "${job[@]}"
    expect_rc 0 "batch $batch run" || finish
    check_consistent "$tmp/b$batch.json"
done
expect_json "$tmp/b2.json" "j['gpu'] == 'RTX3060-12GB'" "GPU named in the JSON"
small=$(json "$tmp/b2.json" "j['peak_bytes']"); large=$(json "$tmp/b8.json" "j['peak_bytes']")
echo "peak: batch 2 $small B, batch 8 $large B"
expect_true "batch 8 ($large) above batch 2 ($small)" [ "$large" -gt "$small" ]
a2=$(json "$tmp/b2.json" "j['category_peak_bytes']['activations']")
a8=$(json "$tmp/b8.json" "j['category_peak_bytes']['activations']")
expect_true "activations scale with the batch ($a2 -> $a8)" [ "$a8" -gt $((3 * a2)) ]
w2=$(json "$tmp/b2.json" "j['category_peak_bytes']['weights']"); w8=$(json "$tmp/b8.json" "j['category_peak_bytes']['weights']")
expect_eq "$w8" "$w2" "weights do not change with the batch"
finish
