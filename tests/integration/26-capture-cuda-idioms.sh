#!/usr/bin/env bash
# A script built from CUDA idioms (queries, events, memory stats, save/load with
# map_location='cuda:0', DataParallel, autocast + GradScaler + clip_grad_norm_) runs
# unmodified and asserts its own expectations; tensors it loads land on the device.
source "$(dirname "$0")/20-capture-common.bash"

capture "$TMP/idioms.trace" --steps 4 -- python3 "$WORKLOADS/cuda_idioms.py"
run_ok $CHECK "$TMP/idioms.trace" --steps 4 --phases-in-order >/dev/null
expect_true "set_to_none=True not recorded" grep -q '^M zero_grad_set_to_none 1$' "$TMP/idioms.trace"
# torch.load(map_location='cuda:0') of the 8x3x3x3 conv weight: a host read and a device copy.
expect_true "checkpoint host read missing" grep -Eq '^A [0-9]+ 864 h ' "$TMP/idioms.trace"
expect_true "conv weight and its loaded device copy missing" [ "$(grep -Ec '^A [0-9]+ 864 g ' "$TMP/idioms.trace")" -ge 2 ]
echo "ok: CUDA idioms run on the CPU"
