#!/usr/bin/env python3
"""Spends longer in set-up (an evaluation pass, say) than the per-step timeout, then trains:
the per-step timeout must not count before the first step (issue class: slow work first)."""
import time

import torch

model = torch.nn.Linear(8, 8).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
time.sleep(4)  # longer than the test's --timeout 2
for _ in range(3):
    model(torch.randn(4, 8, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad()
