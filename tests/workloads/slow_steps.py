#!/usr/bin/env python3
"""Each step after the first takes longer than the test's --timeout, as every step does on a
slow login node: the wait for a step follows the first step's measured time (3 x), not a
fixed --timeout (issue 33, item 7). The first step sleeps 1 s; the later ones sleep 1.5 x
the time from the script's start to the end of its first step, which is less than 3 x the
launcher's count of it (that also holds starting Python and torch), and more than 1 s."""
import time

import torch

start = time.monotonic()
model = torch.nn.Linear(8, 8).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
later = None
for step in range(3):
    time.sleep(1 if later is None else later)
    model(torch.randn(4, 8, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad()
    if later is None:
        later = max(2.0, 1.5 * (time.monotonic() - start))
