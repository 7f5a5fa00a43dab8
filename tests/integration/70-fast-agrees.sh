#!/usr/bin/env bash
# Fast and exact capture of the same small workloads: the estimates agree within 2 % of the
# peak (reserved tensor peak and the nvidia-smi-style peak), and the fast trace is valid.
source "$(dirname "$0")/70-fast-common.bash"

compare() {
    local name=$1
    shift
    capture "$TMP/$name-exact.trace" -- python3 "$@" >/dev/null
    fast_capture "$TMP/$name-fast.trace" -- python3 "$@" >/dev/null
    run_ok $CHECK "$TMP/$name-fast.trace" --steps 3 --phases-in-order >/dev/null
    expect_true "$name: no 'M capture fast'" grep -q '^M capture fast$' "$TMP/$name-fast.trace"
    local key exact fast
    for key in reserved_peak_bytes peak_bytes; do
        exact=$(estimate_field "$TMP/$name-exact.trace" $key)
        fast=$(estimate_field "$TMP/$name-fast.trace" $key)
        agree "$name $key" "$exact" "$fast" 0.02
    done
}

compare gpt "$WORKLOADS/transformer.py" --arch gpt --layers 2 --hidden 64 --heads 4 --seq 32 \
    --vocab 1000 --batch-size 2 --optimizer adam
# ViT's CrossEntropyLoss(label_smoothing=0.1) selects targets with masked_select: the
# upper-bound shape must be exact when no target is ignored.
compare vit "$WORKLOADS/transformer.py" --arch vit --layers 2 --hidden 64 --heads 4 --image-size 32 \
    --patch 8 --batch-size 2
compare resnet18 "$WORKLOADS/vision.py" --model resnet18 --batch-size 2 --image-size 64 --classes 10
expect_true "fast trace lacks module path attribution" \
    grep -q '^S [0-9]* layer1.0.conv1|aten::conv2d' "$TMP/resnet18-fast.trace"
# DataLoader workers (forked, they inherit the modes) and the pin-memory thread change nothing.
fast_capture "$TMP/workers.trace" -- python3 "$WORKLOADS/vision.py" --model resnet18 --batch-size 2 \
    --image-size 64 --classes 10 --workers 2 >/dev/null
# The allocations are the same, in the same order; a free may be noticed an op later or
# sooner (the pin-memory thread's timing on a loaded machine), so frees are not compared
# line by line: the estimate they give must be the same.
expect_true "--workers 2 changed the fast trace's allocations" \
    cmp -s <(grep '^A' "$TMP/resnet18-fast.trace") <(grep '^A' "$TMP/workers.trace")
expect_eq "$(estimate_field "$TMP/workers.trace" reserved_peak_bytes)" \
    "$(estimate_field "$TMP/resnet18-fast.trace" reserved_peak_bytes)" "--workers 2 changed the fast estimate"
echo "ok: fast and exact agree"
