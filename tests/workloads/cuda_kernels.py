#!/usr/bin/env python3
"""Small training steps through ops whose CUDA kernels allocate what the CPU and Meta kernels
do not (docs/cuda-semantics.md, classes K7, K8, K2, K5 and K6), for tests that compare the captures
with each other and with the CUDA kernels' temporaries:

  cuda_kernels.py bmm    `torch.bmm(a, b).sum()`: sum's gradient reaches BmmBackward0
                         expanded (every stride 0), so cuBLAS copies it whole twice (K7)
  cuda_kernels.py index  an embedding-like lookup `table[rows]` (IndexBackward0): the
                         gradient is accumulated with `index_put_(accumulate=True)`, which
                         sorts on a GPU (K8)
  cuda_kernels.py bce    binary_cross_entropy_with_logits with weight and pos_weight, and a
                         masked_fill of a learned value (their formulas' in-place branches, K2)
  cuda_kernels.py einsum `einsum('bi,ij->bj', activation, weight)` under bf16 autocast: CUDA
                         casts the operand list first to last, the activation before the
                         weight (K10)
  cuda_kernels.py bias   a Linear's bias gradient, the column sum of a [1024, 256] gradient,
                         which a GPU reduces across thread blocks through a staging buffer (K5)
  cuda_kernels.py sdpa   fp32 attention over a Linear's q, k and v (4 x 8 heads x 128 x 64),
                         which a GPU runs as memory-efficient attention: its backward copies
                         the expanded output gradient and makes delta and a workspace besides
                         the gradients (K6)

`--steps N` (default 3). Random data; no downloads."""
import argparse

import torch
import torch.nn.functional as F

ROWS, TABLE, WIDTH = 200_000, 4096, 16


def bmm():
    a = torch.randn(8, 256, 512, device="cuda", requires_grad=True)
    b = torch.randn(8, 512, 256, device="cuda", requires_grad=True)
    return [a, b], lambda: torch.bmm(a, b).sum()


def index():
    table = torch.randn(TABLE, WIDTH, device="cuda", requires_grad=True)
    rows = torch.randint(0, TABLE, (ROWS,), device="cuda")
    return [table], lambda: (table[rows] * 2).sum()


def bce():
    logits = torch.randn(4096, 256, device="cuda", requires_grad=True)
    target = torch.rand(4096, 256, device="cuda")
    weight = torch.rand(4096, 256, device="cuda")
    pos_weight = torch.rand(256, device="cuda")
    fill = torch.zeros(1, device="cuda", requires_grad=True)

    def loss():
        weighted = F.binary_cross_entropy_with_logits(logits, target, weight=weight,
                                                      pos_weight=pos_weight)
        filled = logits.masked_fill(target > 0.5, fill.sum())
        return weighted + F.binary_cross_entropy_with_logits(filled, target)
    return [logits, fill], loss


def bias():
    layer = torch.nn.Linear(768, 256).cuda()
    x = torch.randn(1024, 768, device="cuda")
    y = torch.randn(1024, 256, device="cuda")  # a dense gradient: an expanded one splits less
    return list(layer.parameters()), lambda: (layer(x) * y).sum()


def einsum():
    weight = torch.randn(512, 256, device="cuda", requires_grad=True)
    x = torch.randn(64, 512, device="cuda")

    def loss():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return torch.einsum("bi,ij->bj", x * 2, weight).float().sum()
    return [weight], loss


def sdpa():
    batch, seq, heads, dim = 4, 128, 8, 64
    qkv = torch.nn.Linear(heads * dim, 3 * heads * dim).cuda()
    x = torch.randn(batch, seq, heads * dim, device="cuda")

    def loss():
        q, k, v = (t.view(batch, seq, heads, dim).transpose(1, 2) for t in qkv(x).chunk(3, -1))
        out = F.scaled_dot_product_attention(q, k, v)
        # sum's gradient reaches SDPA expanded (every stride 0), so the kernel copies it
        return out.transpose(1, 2).reshape(batch, seq, heads * dim).sum()
    return list(qkv.parameters()), loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("workload", choices=("bmm", "index", "bce", "bias", "einsum", "sdpa"))
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    params, loss = globals()[args.workload]()
    optimizer = torch.optim.SGD(params, lr=0.1)
    for _ in range(args.steps):
        loss().backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
