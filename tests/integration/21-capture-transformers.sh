#!/usr/bin/env bash
# GPT-, BERT- and ViT-shaped transformers (tiny configs) with Adam, AdamW and RMSprop, and
# zero_grad placed before, after and set_to_none: each trace valid, phases in order.
source "$(dirname "$0")/20-capture-common.bash"

tiny=(--layers 2 --hidden 64 --heads 4 --seq 32 --vocab 1000 --image-size 32 --patch 8 --batch-size 2)
capture "$TMP/gpt.trace" -- python3 "$WORKLOADS/transformer.py" --arch gpt "${tiny[@]}" --optimizer adamw
run_ok $CHECK "$TMP/gpt.trace" --steps 3 --phases-in-order >/dev/null
capture "$TMP/bert.trace" --steps 2 -- python3 "$WORKLOADS/transformer.py" --arch bert "${tiny[@]}" \
    --optimizer adam --zero-grad after
run_ok $CHECK "$TMP/bert.trace" --steps 2 --phases-in-order >/dev/null
capture "$TMP/vit.trace" -- python3 "$WORKLOADS/transformer.py" --arch vit "${tiny[@]}" \
    --optimizer rmsprop --zero-grad set-to-none
run_ok $CHECK "$TMP/vit.trace" --steps 3 --phases-in-order >/dev/null
expect_true "set_to_none not recorded" grep -q '^M zero_grad_set_to_none 1$' "$TMP/vit.trace"
expect_true "zero_grad default not recorded" grep -q '^M zero_grad_set_to_none 0$' "$TMP/gpt.trace"
expect_trace "$TMP/gpt.trace" \
    's["per_iteration"]["1"]["gpu_live_delta"] > 2 * s["per_iteration"]["0"]["gpu_live_delta"]' \
    "AdamW keeps two moments per parameter live after iteration 1"
expect_true "attention module not attributed" grep -q '^S [0-9]* blocks.0.attn|' "$TMP/gpt.trace"
echo "ok: gpt, bert, vit captured"
