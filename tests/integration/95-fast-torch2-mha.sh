#!/usr/bin/env bash
# Issue 16 part 3: attention that torch's own Python code calls (nn.MultiheadAttention ->
# F.multi_head_attention_forward -> scaled_dot_product_attention, no torch function mode
# active there) also takes the target GPU's backend: the small GPT of transformer.py (fp32,
# boolean causal mask) runs memory-efficient attention, and never the math path's T x T
# softmax. Checked to fail with the rebinding removed (rebind_functional a no-op: math).
source "$(dirname "$0")/90-fast-torch2-common.bash"
"$FAST" --python "$VPY" --out "$TMP/gpt.trace" --steps 3 --timeout 120 -- python \
    "$WORKLOADS/transformer.py" --arch gpt --layers 2 --hidden 64 --heads 4 --seq 32 --vocab 1000 \
    >"$TMP/out" 2>&1 || fail "capture"
"$VPY" "$WORKLOADS/trace_stats.py" "$TMP/gpt.trace" >"$TMP/gpt.json"
expect_true "nn.MultiheadAttention takes the memory-efficient kernel" "$VPY" - "$TMP/gpt.json" <<'PY'
import json, sys
ops = json.load(open(sys.argv[1]))["ops"]
efficient = sum(n for op, n in ops.items() if op.endswith("aten::_scaled_dot_product_efficient_attention"))
fails = []
if efficient == 0:
    fails.append("nn.MultiheadAttention did not run the memory-efficient kernel")
if any("_safe_softmax" in op for op in ops):
    fails.append("the math path's softmax over T x T scores ran")
print(f"memory-efficient attention outputs: {efficient}")
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
# Under AMP, the in-projection inside F.multi_head_attention_forward takes fp16 weight copies
# (F.linear rebound for autocast); checked to fail with `linear` left out of the rebinding.
"$FAST" --python "$VPY" --out "$TMP/amp.trace" --steps 3 --timeout 120 -- python \
    "$WORKLOADS/transformer.py" --arch gpt --layers 2 --hidden 64 --heads 4 --seq 32 --vocab 1000 \
    --amp >"$TMP/out" 2>&1 || fail "AMP capture"
expect_true "AMP: no fp16 copies for nn.MultiheadAttention's projections" \
    grep -q '^S [0-9]* blocks\.0\.attn|aten::linear>aten::_to_copy$' "$TMP/amp.trace"
echo "ok: AMP casts inside nn.MultiheadAttention"
echo "all checks passed"
