#!/usr/bin/env python3
"""A small causal self-attention LM that calls F.scaled_dot_product_attention itself, the way
current GPT code does (nanoGPT, HF's sdpa attention), for the torch 2.x fast-mode tests 91-93.

  attention.py [--seq 256] [--hidden 128] [--heads 2] [--layers 2] [--batch 4]
               [--dtype bf16|fp16|fp32] [--mask] [--amp bf16|fp16] [--optimizer-kind fused|foreach|for-loop]
--dtype sets the weights' dtype (no autocast); --amp keeps fp32 weights and trains under
torch.autocast('cuda') with a GradScaler; --mask passes a boolean causal mask instead of
is_causal=True.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


class Attention(nn.Module):
    def __init__(self, hidden, heads, mask):
        super().__init__()
        self.heads, self.mask = heads, mask
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        if self.mask:
            causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=causal)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class Block(nn.Module):
    def __init__(self, hidden, heads, mask):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.attn = Attention(hidden, heads, mask)
        self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--dtype", default="fp32", choices=DTYPES)
    p.add_argument("--amp", choices=["bf16", "fp16"])
    p.add_argument("--mask", action="store_true")
    p.add_argument("--optimizer-kind", default="default", choices=["default", "fused", "foreach", "for-loop"])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--move", default="to", choices=["to", "cuda"],
                   help="to: model.to(device=, dtype=) in one call; cuda: .cuda() then .to(dtype)")
    args = p.parse_args()
    device = torch.device("cuda")
    model = nn.Sequential(nn.Embedding(args.vocab, args.hidden),
                          *[Block(args.hidden, args.heads, args.mask) for _ in range(args.layers)],
                          nn.LayerNorm(args.hidden), nn.Linear(args.hidden, args.vocab))
    if args.move == "cuda":
        model = model.cuda().to(DTYPES[args.dtype])
    else:
        model = model.to(device=device, dtype=DTYPES[args.dtype])
    kind = {"fused": {"fused": True}, "foreach": {"foreach": True},
            "for-loop": {"foreach": False}}.get(args.optimizer_kind, {})
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, **kind)
    amp_dtype = DTYPES.get(args.amp)
    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype is not None)
    for step in range(args.steps):
        ids = torch.randint(0, args.vocab, (args.batch, args.seq)).to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            logits = model(ids)
            loss = F.cross_entropy(logits.view(-1, args.vocab), ids.view(-1))
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        print(f"step {step} loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
