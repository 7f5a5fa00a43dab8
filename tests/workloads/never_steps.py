#!/usr/bin/env python3
"""Evaluates forever before training and so never steps: xmem-profile must time out clearly,
naming the budget and showing where the script was (its stderr tail)."""
import sys

import torch

model = torch.nn.Linear(8, 8).cuda()
x = torch.randn(4, 8, device="cuda")
print("evaluating before training", file=sys.stderr, flush=True)
with torch.no_grad():
    while True:
        model(x)
