#!/usr/bin/env python3
"""Computes forever and never calls optimizer.step(): xmem-profile must time out clearly."""
import torch

model = torch.nn.Linear(8, 8).cuda()
x = torch.randn(4, 8, device="cuda")
while True:
    model(x).sum().backward()
