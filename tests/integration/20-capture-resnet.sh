#!/usr/bin/env bash
# resnet18 (batch 2, 64x64) through xmem-profile: valid trace, 3 iterations stopped out of a
# 100-epoch loop, phases in order, parameters accounted in iteration 0, steady iterations,
# convolution geometry (K records).
source "$(dirname "$0")/20-capture-common.bash"

params=$($PY -c 'import torchvision; m = torchvision.models.resnet18(num_classes=10)
print(sum(t.numel() * t.element_size() for t in list(m.parameters()) + list(m.buffers())))')
start=$(date +%s)
capture "$TMP/r18.trace" -- python3 "$WORKLOADS/vision.py" --model resnet18 --batch-size 2 \
    --image-size 64 --classes 10 --epochs 100 --steps-per-epoch 2 --optimizer sgd
run_ok $CHECK "$TMP/r18.trace" --steps 3 --phases-in-order --min-setup-gpu-bytes "$params" >/dev/null
expect_trace "$TMP/r18.trace" \
    's["per_iteration"]["3"]["allocs"] == s["per_iteration"]["3"]["frees"]' \
    "steady state: iteration 3 frees what it allocates"
expect_trace "$TMP/r18.trace" \
    'sum(s["per_iteration"]["2"]["phase_gpu_allocs"].values()) == sum(s["per_iteration"]["3"]["phase_gpu_allocs"].values())' \
    "iterations 2 and 3 (across the epoch boundary) make the same device allocations"
expect_trace "$TMP/r18.trace" \
    's["per_iteration"]["2"]["phase_gpu_allocs"].get("data", 0) >= 2' \
    "the batch copy to the device is in the data phase"
expect_trace "$TMP/r18.trace" \
    's["per_iteration"]["1"]["gpu_live_delta"] >= '"$params"' // 2' \
    "SGD momentum buffers stay live after iteration 1"
expect_true "zero_grad metadata" grep -q '^M zero_grad_set_to_none 0$' "$TMP/r18.trace"
cpus=$($PY -c 'import os; print(len(os.sched_getaffinity(0)))')
expect_true "default threads are not all $cpus CPUs" grep -q "^M threads $cpus$" "$TMP/r18.trace"
expect_true "module path attribution" grep -q '^S [0-9]* layer1.0.conv1|aten::conv2d' "$TMP/r18.trace"
# One K record per convolution module (20 in resnet18), with its geometry (docs/trace-format.md).
expect_true "no K record for layer1.0.conv1 (first K records: $(grep -m 3 '^K' "$TMP/r18.trace"))" \
    grep -qx 'K layer1.0.conv1 conv x=2,64,16,16 w=64,64,3,3 s=1,1 p=1,1 d=1,1 g=1 e=4 t=0' "$TMP/r18.trace"
expect_eq "$(grep -c '^K .* conv ' "$TMP/r18.trace")" 20 "K records, one per conv"
echo "ok: stopped a 100-epoch script after 3 steps in $(( $(date +%s) - start )) s"
