#!/usr/bin/env python3
"""ReflectionPad2d before a convolution: its backward, reflection_pad2d_backward, has no Meta
kernel in torch 1.13, a missing shape-only kernel, not a data-dependent op (issue 17 class 7)."""
import torch

model = torch.nn.Sequential(torch.nn.ReflectionPad2d(2), torch.nn.Conv2d(3, 4, 3)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x = torch.randn(2, 3, 16, 16, device="cuda", requires_grad=True)
    model(x).sum().backward()
    opt.step()
    opt.zero_grad()
