#!/usr/bin/env bash
# Issue 16 part 3: fast mode on torch 2.x runs an AMP script (torch.autocast('cuda') +
# torch.amp.GradScaler('cuda')) instead of refusing it, with CUDA's casts: linear layers take
# bf16/fp16 copies of their fp32 weights, cross_entropy an fp32 copy of its input, and the
# scaler's state lives on the device. AMP's peak is below the fp32 run's (2-byte activations).
# Checked to fail with the casts removed (device_mode.autocast left None: no linear casts).
source "$(dirname "$0")/90-fast-torch2-common.bash"
args=(--seq 256 --hidden 128 --heads 2 --layers 2 --batch 4)
for run in bf16 fp16 fp32; do
    amp=(--amp "$run"); [ "$run" = fp32 ] && amp=()
    "$FAST" --python "$VPY" --out "$TMP/$run.trace" --steps 3 --timeout 120 \
        -- python "$WORKLOADS/attention.py" "${args[@]}" "${amp[@]}" >"$TMP/out" 2>&1 || fail "$run capture"
    "$VPY" "$WORKLOADS/trace_stats.py" "$TMP/$run.trace" >"$TMP/$run.json"
    expect_true "$run: wrong M amp line: $(grep '^M amp' "$TMP/$run.trace")" \
        grep -q "^M amp $( [ $run = fp32 ] && echo off || echo $run)\$" "$TMP/$run.trace"
done
expect_true "AMP's casts and peaks" "$VPY" - "$TMP"/bf16.json "$TMP"/fp16.json "$TMP"/fp32.json <<'PY'
import json, sys
bf16, fp16, fp32 = (json.load(open(p)) for p in sys.argv[1:])
fails = []
for name, s in (("bf16", bf16), ("fp16", fp16)):
    if not s["ops"].get("aten::linear>aten::_to_copy"):
        fails.append(f"{name}: no low-precision weight copies for linear")
    if not s["ops"].get("aten::cross_entropy>aten::_to_copy"):
        fails.append(f"{name}: cross_entropy's input not cast to fp32")
    if not any("flash_attention" in op for op in s["ops"]):
        fails.append(f"{name}: attention did not take flash (inputs not cast?)")
    if s["peak"] >= 0.9 * fp32["peak"]:
        fails.append(f"{name}: peak {s['peak']} not below 90% of fp32's {fp32['peak']}")
if any("_to_copy" in op and "linear" in op for op in fp32["ops"]):
    fails.append("fp32 run cast linear inputs")
print(f"peak: bf16 {bf16['peak']} B, fp16 {fp16['peak']} B, fp32 {fp32['peak']} B")
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
echo "all checks passed"
