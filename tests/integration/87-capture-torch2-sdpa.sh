#!/usr/bin/env bash
# torch 2.x, exact capture: F.scaled_dot_product_attention on device tensors takes the
# backend the target GPU would take, and its memory. A bf16 causal attention runs math
# attention on an sm75 GPU (no flash before sm80, no bf16 memory-efficient kernel before it),
# which keeps the T x T attention (upcast to fp32) for backward; on sm80 it runs flash, which
# keeps the output and logsumexp only; on sm90 cuDNN comes first. The estimate moves by the
# attention matrices, as a GPU run does.
source "$(dirname "$0")/85-capture-torch2-common.bash"

cat >"$TMP/attn.py" <<'PY'
import torch, torch.nn as nn, torch.nn.functional as F
class Attention(nn.Module):
    def __init__(self, d=128, heads=4):
        super().__init__()
        self.heads, self.qkv, self.out = heads, nn.Linear(d, 3 * d), nn.Linear(d, d)
    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(B, T, C))
device = torch.accelerator.current_accelerator()
model = nn.Sequential(Attention(), Attention()).to(device)
opt = torch.optim.AdamW(model.parameters())
for step in range(10):
    x = torch.randn(4, 512, 128, device=device)
    opt.zero_grad()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().square().mean()
    loss.backward()
    opt.step()
PY

XMEM_GPU_CAPABILITY=7.5 capture "$TMP/sm75.trace" "$TMP/attn.py" >/dev/null
XMEM_GPU_CAPABILITY=8.0 capture "$TMP/sm80.trace" "$TMP/attn.py" >/dev/null
case "$(meta "$TMP/sm75.trace" sdpa_math)" in math:*) ;; *) fail "sm75 bf16 did not take math";; esac
case "$(meta "$TMP/sm80.trace" sdpa_flash)" in flash:*) ;; *) fail "sm80 bf16 did not take flash";; esac
expect_true "sm80 also ran math" [ -z "$(meta "$TMP/sm80.trace" sdpa_math)" ]

# Math keeps each layer's fp32 probabilities (B x H x T x T) for backward; flash does not.
tt=$(( 4 * 4 * 512 * 512 * 4 ))
math=$(peak_g "$TMP/sm75.trace" 2)
flash=$(peak_g "$TMP/sm80.trace" 2)
echo "device peak of a step: math $math B, flash $flash B (one T x T: $tt B)"
expect_true "math keeps less than two layers' T x T over flash" [ $(( math - flash )) -ge $(( 2 * tt )) ]
expect_true "flash step peak $flash B holds a T x T" [ "$flash" -lt "$tt" ]

# The same traces estimated for one GPU: the estimate moves by the attention memory.
for t in sm75 sm80; do
    estimate "$TMP/$t.json" --gpu A100-80GB --trace-in "$TMP/$t.trace"
done
em=$(json "$TMP/sm75.json" "j['peak_bytes']")
ef=$(json "$TMP/sm80.json" "j['peak_bytes']")
echo "estimate: math $em B, flash $ef B"
expect_true "estimates differ by less than the attention matrices" [ $(( em - ef )) -ge $(( 2 * tt )) ]

# xmem-estimate hands the catalog's capability to the capture: H100 (sm90) prefers cuDNN.
estimate "$TMP/h100.json" --gpu H100 --keep-trace "$TMP/h100.trace" -- python "$TMP/attn.py"
case "$(meta "$TMP/h100.trace" sdpa_cudnn)" in cudnn:*) ;; *) fail "H100 did not take cuDNN attention";; esac
echo "ok: SDPA follows the target GPU (sm75 math, sm80 flash, sm90 cuDNN)"
