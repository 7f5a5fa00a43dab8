#!/usr/bin/env python3
"""One small training loop per failure class found on public scripts (issue 17), picked by
flags, so each test profiles exactly the construct it is about:

  --autocast fp32|fp16|bf16  the forward under torch.autocast("cuda", dtype=...) (or, with
                             --cuda-amp, torch.cuda.amp.autocast(dtype=...)); fp32 is a
                             no-op on a GPU, so its estimate must equal the plain run's.
  --zero-grad-keep           optimizer.zero_grad(set_to_none=False) at the top of the loop,
                             after the batch is on the device: it allocates and frees
                             nothing, and must still reach the trace as a zero_grad phase.
  --no-cuda                  the forgotten --cuda flag: everything stays on the host, and
                             the loop counts correct predictions against host labels.
"""
import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--autocast", choices=["none", "fp32", "fp16", "bf16"], default="none")
p.add_argument("--cuda-amp", action="store_true")
p.add_argument("--zero-grad-keep", action="store_true")
p.add_argument("--no-cuda", action="store_true")
p.add_argument("--steps", type=int, default=3)
p.add_argument("--hidden", type=int, default=256)
p.add_argument("--batch-size", type=int, default=32)
args = p.parse_args()

device = "cpu" if args.no_cuda else "cuda"
model = torch.nn.Sequential(torch.nn.Linear(args.hidden, 4 * args.hidden), torch.nn.GELU(),
                            torch.nn.Linear(4 * args.hidden, args.hidden)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def autocast():
    if args.autocast == "none":
        return torch.autocast("cuda", enabled=False)
    if args.cuda_amp:
        return torch.cuda.amp.autocast(dtype=dtypes[args.autocast])
    return torch.autocast("cuda", dtype=dtypes[args.autocast])


for step in range(args.steps):
    x = torch.randn(args.batch_size, args.hidden).to(device)
    if args.zero_grad_keep:
        opt.zero_grad(set_to_none=False)
    with autocast():
        loss = model(x).float().pow(2).mean()
    if args.no_cuda:  # host outputs against host labels: fast mode's host-meta model met this
        labels = torch.randint(0, args.hidden, (args.batch_size,))
        correct = (model(x).argmax(1) == labels).sum().item()
    loss.backward()
    opt.step()
    if not args.zero_grad_keep:
        opt.zero_grad(set_to_none=True)
print("done", float(loss))
