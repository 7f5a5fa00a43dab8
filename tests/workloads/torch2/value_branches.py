#!/usr/bin/env python3
"""A training loop whose Python branches read floating-point GPU values, as real scripts do:
transformers' Adafactor (`max(eps, state["RMS"])` in its learning rate), a gradient-norm
check after `clip_grad_norm_`, a skip of non-finite losses, and fp16's GradScaler. None of
these branches changes what is allocated. `--activation-branch` adds one that reads a whole
activation (`if (h > 0).any():`), which fast mode must still refuse.

    value_branches.py [--steps N] [--batch N] [--hidden N] [--activation-branch]
                      [--no-norm-check]"""
import argparse

import torch
from transformers.optimization import Adafactor


def arguments(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--activation-branch", action="store_true")
    p.add_argument("--no-norm-check", action="store_true", help="Adafactor's branch alone")
    return p.parse_args(argv)


def build_model(args):
    return torch.nn.Sequential(torch.nn.Linear(args.hidden, 4 * args.hidden), torch.nn.GELU(),
                               torch.nn.LayerNorm(4 * args.hidden),
                               torch.nn.Linear(4 * args.hidden, args.hidden))


def main():
    args = arguments()
    model = build_model(args).cuda()
    optimizer = Adafactor(model.parameters(), lr=None, relative_step=True, warmup_init=False,
                          scale_parameter=True)
    scaler = torch.amp.GradScaler("cuda")
    large_norms = 0
    for _ in range(args.steps):
        x = torch.randn(args.batch, args.hidden, device="cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            h = model(x)
            if args.activation_branch and (h > 0).any():
                h = h * 2
            loss = h.float().pow(2).mean()
        if not torch.isfinite(loss):
            continue
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if not args.no_norm_check and total_norm > 100.0:
            large_norms += 1
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
    print(f"steps {args.steps}, large gradient norms {large_norms}")


if __name__ == "__main__":
    main()
