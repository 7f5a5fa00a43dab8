#!/usr/bin/env python3
"""Trains one step, then fails the way a buggy script does: xmem-profile must show the tail
of its stderr and write no trace."""
import torch

model = torch.nn.Linear(8, 2).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    opt.zero_grad()
    model(torch.randn(4, 8).cuda()).sum().backward()
    opt.step()
    if step == 1:
        raise ValueError("shape mismatch in my_custom_head (xmem crash test)")
