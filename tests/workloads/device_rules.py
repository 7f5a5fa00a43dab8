#!/usr/bin/env python3
"""Exercises each device rule of docs/capture.md with a distinct storage size, so a test can
check the g/h tag of every case in the trace (sizes in bytes are in the comments)."""
import io

import torch

host = torch.ones(11)                                  # 44 h: factory without a device
dev = host.cuda()                                      # 44 g: .cuda() of a host tensor copies
assert dev.cuda() is dev and dev.to("cuda") is dev     # identity on the device: no storage
assert dev.is_cuda and dev.device == torch.device("cuda", 0) and dev.get_device() == 0
assert not host.is_cuda and host.get_device() == -1
back = dev.cpu()                                       # 44 h: copy to the host
pinned = torch.ones(13).pin_memory()                   # 52 h + 52 h (source and pinned copy)
made = torch.zeros(17, device="cuda")                  # 68 g: device factory
by_ordinal = torch.zeros(5, device=0)                  # 20 g: a bare ordinal as device=
ordinal = torch.zeros(19).to(0)                        # 76 h source, 76 g copy: a bare ordinal is CUDA
data = dev.new_tensor([1.0] * 23)                      # 92 g: new_tensor of a device tensor
plain = torch.tensor([1.0] * 29)                       # 116 h: torch.tensor without a device
on_dev = torch.tensor([1.0] * 31, device="cuda:0")     # 124 g
host_sum = torch.ones(37) + torch.ones(37)             # 148 h x3: ops on host tensors
mixed = made[:1] * torch.ones(41, device="cuda")       # 164 g x2: an op with a device operand
like = torch.empty_like(made, dtype=torch.float64)     # 136 g: *_like follows its input
half = on_dev.to(torch.float16)                        # 62 g: dtype change stays on the device
buf = io.BytesIO()
torch.save(torch.arange(43, dtype=torch.float32), buf)
buf.seek(0)
loaded = torch.load(buf, map_location="cuda:0")        # 172 h (saved), 172 h read, 172 g device copy
assert loaded.is_cuda

model = torch.nn.Linear(2, 2).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.ones(1, 2, device="cuda")).sum().backward()
opt.step()
