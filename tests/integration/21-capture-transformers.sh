#!/usr/bin/env bash
# GPT-, BERT- and ViT-shaped transformers (tiny configs) with Adam, AdamW and RMSprop, and
# zero_grad placed before, after and set_to_none: each trace valid, phases in order.
source "$(dirname "$0")/20-capture-common.bash"

tiny=(--layers 2 --hidden 64 --heads 4 --seq 32 --vocab 1000 --image-size 32 --patch 8 --batch-size 2)
capture "$TMP/gpt.trace" -- python3 "$WORKLOADS/transformer.py" --arch gpt "${tiny[@]}" --optimizer adamw
run $CHECK "$TMP/gpt.trace" --steps 3 --phases-in-order >/dev/null
capture "$TMP/bert.trace" --steps 2 -- python3 "$WORKLOADS/transformer.py" --arch bert "${tiny[@]}" \
    --optimizer adam --zero-grad after
run $CHECK "$TMP/bert.trace" --steps 2 --phases-in-order >/dev/null
capture "$TMP/vit.trace" -- python3 "$WORKLOADS/transformer.py" --arch vit "${tiny[@]}" \
    --optimizer rmsprop --zero-grad set-to-none
run $CHECK "$TMP/vit.trace" --steps 3 --phases-in-order >/dev/null
grep -q '^M zero_grad_set_to_none 1$' "$TMP/vit.trace" || { echo "FAILED: set_to_none not recorded"; exit 1; }
grep -q '^M zero_grad_set_to_none 0$' "$TMP/gpt.trace" || { echo "FAILED: zero_grad default not recorded"; exit 1; }
expect "$TMP/gpt.trace" "AdamW keeps two moments per parameter live after iteration 1" \
    's["per_iteration"]["1"]["gpu_live_delta"] > 2 * s["per_iteration"]["0"]["gpu_live_delta"]'
grep -q '^S [0-9]* blocks.0.attn|' "$TMP/gpt.trace" || { echo "FAILED: attention module not attributed"; exit 1; }
echo "ok: gpt, bert, vit captured"
