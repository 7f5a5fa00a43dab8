#!/usr/bin/env bash
# More torchvision models, optimizers and DataLoader worker processes (batches arrive in
# shared memory; the device copy must still be traced).
source "$(dirname "$0")/20-capture-common.bash"

small=(--batch-size 2 --image-size 64 --classes 10 --steps-per-epoch 3)
capture "$TMP/mnv3.trace" -- python3 "$WORKLOADS/vision.py" --model mobilenet_v3 "${small[@]}" \
    --optimizer adagrad --workers 2
run $CHECK "$TMP/mnv3.trace" --steps 3 --phases-in-order >/dev/null
# Each step copies one image batch (2x3x64x64 fp32) to the device in the data phase.
grep -Eq "^A [0-9]+ $(( 2 * 3 * 64 * 64 * 4 )) g" "$TMP/mnv3.trace" \
    || { echo "FAILED: batch copy from worker shared memory not traced"; exit 1; }
capture "$TMP/effnet.trace" --steps 2 -- python3 "$WORKLOADS/vision.py" --model efficientnet_b0 "${small[@]}" \
    --optimizer adam --amp
run $CHECK "$TMP/effnet.trace" --steps 2 --phases-in-order >/dev/null
grep -q '^M amp fp16$' "$TMP/effnet.trace" || { echo "FAILED: amp not recorded"; exit 1; }
echo "ok: mobilenet_v3 (workers) and efficientnet_b0 (amp) captured"
