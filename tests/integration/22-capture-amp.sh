#!/usr/bin/env bash
# AMP: torch.cuda.amp.autocast + GradScaler run on the CPU (bf16 autocast) and halve the
# activation bytes of the linear layers, while the ops CUDA autocast keeps in fp32 (softmax,
# layer_norm) stay fp32; the trace records what the script asked for.
source "$(dirname "$0")/20-capture-common.bash"

tiny=(--arch gpt --layers 2 --hidden 128 --heads 4 --seq 64 --vocab 512 --batch-size 4 --optimizer adamw)
capture "$TMP/fp32.trace" -- python3 "$WORKLOADS/transformer.py" "${tiny[@]}"
capture "$TMP/amp.trace" -- python3 "$WORKLOADS/transformer.py" "${tiny[@]}" --amp
run_ok $CHECK "$TMP/fp32.trace" --steps 3 --phases-in-order >/dev/null
run_ok $CHECK "$TMP/amp.trace" --steps 3 --phases-in-order >/dev/null
expect_true "fp32 trace not marked amp off" grep -q '^M amp off$' "$TMP/fp32.trace"
expect_true "amp trace not marked fp16" grep -q '^M amp fp16$' "$TMP/amp.trace"
expect_true "amp mapping not recorded" grep -q '^M amp_mapping ' "$TMP/amp.trace"

# Largest device storage of the MLP's first Linear in iteration 2's forward: its output,
# batch x seq x 4*hidden (AMP adds smaller bf16 casts of the weight and input beside it).
# Device only, here and in largest_in: the CPU kernel's own host scratch is in the trace too
# ('h'), and depends on the login node's CPU; on one without AVX512-BF16 the bf16 addmm
# takes a 1,048,704 B host buffer, twice the fp32 output.
mlp_bytes() {
    awk '$1=="S"{s[$2]=$3} $1=="I"{it=$2} $1=="P"{ph=$2}
         $1=="A" && $4=="g" && it==2 && ph=="forward" && s[$6] ~ /^blocks\.0\.mlp\.0\|aten::linear/ && $3>b {b=$3}
         END{print b+0}' "$1"
}
fp32=$(mlp_bytes "$TMP/fp32.trace")
amp=$(mlp_bytes "$TMP/amp.trace")
echo "mlp.0 forward bytes: fp32 $fp32, amp $amp"
expect_true "no mlp.0 linear allocations found" [ "$fp32" -gt 0 ]
expect_true "AMP did not halve the linear output" [ $(( amp * 2 )) -eq "$fp32" ]
out_fp32=$(( 4 * 64 * 512 * 4 ))
expect_true "fp32 output of $out_fp32 B missing" grep -Eq "^A [0-9]+ $out_fp32 g" "$TMP/fp32.trace"
expect_true "bf16 output missing" grep -Eq "^A [0-9]+ $(( out_fp32 / 2 )) g" "$TMP/amp.trace"

# CUDA autocast runs softmax (dtype=float32) and layer_norm in fp32 where CPU autocast keeps
# bf16: the capture reproduces CUDA's list, so iteration 2's attention probabilities
# (batch*heads x seq x seq) and ln1's output (batch x seq x hidden) are fp32-sized.
expect_true "CUDA fp32 op list not installed" grep -q '^M amp_fp32_ops ' "$TMP/amp.trace"
largest_in() { # TRACE SCOPE: largest device allocation of iteration 2 made under SCOPE
    awk -v want="$2" '$1=="S" && $3==want {ids[$2]=1} $1=="I"{it=$2}
         $1=="A" && $4=="g" && it==2 && ($6 in ids) && $3>b {b=$3} END{print b+0}' "$1"
}
probs=$(largest_in "$TMP/amp.trace" 'blocks.0.attn|aten::softmax>aten::_softmax')
expect_true "AMP softmax output is $probs B, not fp32" [ "$probs" -eq $(( 4 * 4 * 64 * 64 * 4 )) ]
ln=$(largest_in "$TMP/amp.trace" 'blocks.0.ln1|aten::layer_norm>aten::empty')
expect_true "AMP layer_norm output is $ln B, not fp32" [ "$ln" -eq $(( 4 * 64 * 128 * 4 )) ]
echo "ok: AMP halves activation storages; softmax and layer_norm stay fp32 as on CUDA"
