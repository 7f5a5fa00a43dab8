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
run $CHECK "$TMP/r18.trace" --steps 3 --phases-in-order --min-setup-gpu-bytes "$params" >/dev/null
expect "$TMP/r18.trace" "steady state: iteration 3 frees what it allocates" \
    's["per_iteration"]["3"]["allocs"] == s["per_iteration"]["3"]["frees"]'
expect "$TMP/r18.trace" "iterations 2 and 3 (across the epoch boundary) make the same device allocations" \
    'sum(s["per_iteration"]["2"]["phase_gpu_allocs"].values()) == sum(s["per_iteration"]["3"]["phase_gpu_allocs"].values())'
expect "$TMP/r18.trace" "the batch copy to the device is in the data phase" \
    's["per_iteration"]["2"]["phase_gpu_allocs"].get("data", 0) >= 2'
expect "$TMP/r18.trace" "SGD momentum buffers stay live after iteration 1" \
    's["per_iteration"]["1"]["gpu_live_delta"] >= '"$params"' // 2'
grep -q '^M zero_grad_set_to_none 0$' "$TMP/r18.trace" || { echo "FAILED: zero_grad metadata"; exit 1; }
cpus=$($PY -c 'import os; print(len(os.sched_getaffinity(0)))')
grep -q "^M threads $cpus$" "$TMP/r18.trace" || { echo "FAILED: default threads are not all $cpus CPUs"; exit 1; }
grep -q '^S [0-9]* layer1.0.conv1|aten::conv2d' "$TMP/r18.trace" || { echo "FAILED: module path attribution"; exit 1; }
# One K record per convolution module (20 in resnet18), with its geometry (docs/trace-format.md).
grep -qx 'K layer1.0.conv1 conv x=2,64,16,16 w=64,64,3,3 s=1,1 p=1,1 d=1,1 g=1 e=4 t=0' "$TMP/r18.trace" ||
    { echo "FAILED: no K record for layer1.0.conv1:"; grep '^K' "$TMP/r18.trace" | head -3; exit 1; }
[ "$(grep -c '^K .* conv ' "$TMP/r18.trace")" = 20 ] ||
    { echo "FAILED: $(grep -c '^K' "$TMP/r18.trace") K records, expected 20 (one per conv)"; exit 1; }
echo "ok: stopped a 100-epoch script after 3 steps in $(( $(date +%s) - start )) s"
