#!/usr/bin/env bash
# More torchvision models, optimizers and DataLoader worker processes (batches arrive in
# shared memory; the device copy must still be traced).
source "$(dirname "$0")/20-capture-common.bash"

small=(--batch-size 2 --image-size 64 --classes 10 --steps-per-epoch 3)
capture "$TMP/mnv3.trace" -- python3 "$WORKLOADS/vision.py" --model mobilenet_v3 "${small[@]}" \
    --optimizer adagrad --workers 2
run_ok $CHECK "$TMP/mnv3.trace" --steps 3 --phases-in-order >/dev/null
# Each step copies one image batch (2x3x64x64 fp32) to the device in the data phase.
expect_true "batch copy from worker shared memory not traced" \
    grep -Eq "^A [0-9]+ $(( 2 * 3 * 64 * 64 * 4 )) g" "$TMP/mnv3.trace"
capture "$TMP/effnet.trace" --steps 2 -- python3 "$WORKLOADS/vision.py" --model efficientnet_b0 "${small[@]}" \
    --optimizer adam --amp
run_ok $CHECK "$TMP/effnet.trace" --steps 2 --phases-in-order >/dev/null
expect_true "amp not recorded" grep -q '^M amp fp16$' "$TMP/effnet.trace"
echo "ok: mobilenet_v3 (workers) and efficientnet_b0 (amp) captured"
