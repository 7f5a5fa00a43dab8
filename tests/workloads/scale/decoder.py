#!/usr/bin/env python3
"""Decoder-only transformer LMs written with torch.nn, at sizes that do not fit a login node.

  --size 350m   GPT-style, 24 x 1024, 16 heads, GELU MLP 4x, vocab 50257, tied head (~355M)
  --size 1.3b   GPT-style, 24 x 2048, 16 heads, GELU MLP 4x, vocab 50257, tied head (~1.3B)
  --size 7b     LLaMA-style, 32 x 4096, 32 heads, SwiGLU MLP 11008, vocab 32000 (~6.7B)
  --size tiny   2 x 64, 4 heads, vocab 1000: runs for real on a CPU in seconds

--dtype fp32: fp32 weights, AdamW (fp32 states). --dtype bf16: bf16 weights, AdamW with fp32
states (exp_avg, exp_avg_sq created in fp32 before the first step). --checkpoint wraps every
block in torch.utils.checkpoint. Written as a GPU user writes it: model.cuda(), token batches
made on the host and copied, loss printed with .item(). Only xmem-profile-fast can run the
large sizes on a CPU host (meta tensors, no memory); the exact capture would need the RAM.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

SIZES = {  # layers, hidden, heads, mlp, vocab, swiglu
    "tiny": (2, 64, 4, 256, 1000, False),
    "350m": (24, 1024, 16, 4096, 50257, False),
    "1.3b": (24, 2048, 16, 8192, 50257, False),
    "7b": (32, 4096, 32, 11008, 32000, True),
}


class Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.out = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(x).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(h // self.heads)
        causal = torch.triu(torch.ones(s, s, dtype=torch.bool, device=x.device), diagonal=1)
        attn = scores.masked_fill(causal, float("-inf")).softmax(dim=-1)
        return self.out((attn @ v).transpose(1, 2).reshape(b, s, h))


class MLP(nn.Module):
    def __init__(self, hidden, inner, swiglu):
        super().__init__()
        self.swiglu = swiglu
        self.up = nn.Linear(hidden, inner, bias=not swiglu)
        self.gate = nn.Linear(hidden, inner, bias=False) if swiglu else None
        self.down = nn.Linear(inner, hidden, bias=not swiglu)

    def forward(self, x):
        if self.swiglu:
            return self.down(F.silu(self.gate(x)) * self.up(x))
        return self.down(F.gelu(self.up(x)))


class Block(nn.Module):
    def __init__(self, hidden, heads, inner, swiglu):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = Attention(hidden, heads)
        self.ln2 = nn.LayerNorm(hidden)
        self.mlp = MLP(hidden, inner, swiglu)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Decoder(nn.Module):
    def __init__(self, layers, hidden, heads, inner, vocab, swiglu, seq, checkpoint):
        super().__init__()
        self.checkpoint = checkpoint
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = None if swiglu else nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads, inner, swiglu) for _ in range(layers))
        self.ln = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)
        if not swiglu:
            self.head.weight = self.tok.weight  # GPT ties the LM head to the embedding

    def forward(self, ids):
        x = self.tok(ids)
        if self.pos is not None:
            x = x + self.pos(torch.arange(ids.size(1), device=ids.device))
        for block in self.blocks:
            if self.checkpoint:
                x = torch.utils.checkpoint.checkpoint(block, x)
            else:
                x = block(x)
        return self.head(self.ln(x))


def fp32_adam_states(optimizer):
    """bf16 weights, fp32 moments: create AdamW's state in fp32 before its first step."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            optimizer.state[p] = {
                "step": torch.tensor(0.0),
                "exp_avg": torch.zeros_like(p, dtype=torch.float32),
                "exp_avg_sq": torch.zeros_like(p, dtype=torch.float32),
            }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="tiny", choices=sorted(SIZES))
    p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--checkpoint", action="store_true")
    p.add_argument("--steps", type=int, default=10)
    args = p.parse_args()
    layers, hidden, heads, inner, vocab, swiglu = SIZES[args.size]
    model = Decoder(layers, hidden, heads, inner, vocab, swiglu, args.seq, args.checkpoint)
    if args.dtype == "bf16":
        model = model.to(torch.bfloat16)
    model = model.cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1)
    if args.dtype == "bf16":
        fp32_adam_states(optimizer)
    params = sum(p.numel() for p in model.parameters())
    print(f"decoder {args.size}: {params / 1e6:.0f}M parameters, {args.dtype}", flush=True)
    for step in range(args.steps):
        ids = torch.randint(vocab, (args.batch_size, args.seq + 1))
        ids = ids.cuda()
        logits = model(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab).float(), ids[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"step {step} loss {loss.item():.4f}", flush=True)


if __name__ == "__main__":
    main()
