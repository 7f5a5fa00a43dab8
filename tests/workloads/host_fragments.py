"""Frees device tensors between live ones, then allocates larger ones, and prints how much
the process's resident memory grew against the bytes still live: `host RSS grew G MiB for L
MiB of live tensors`. Under glibc's default malloc settings the first free raises its mmap
threshold, the 2 MiB tensors then come from the heap, their freed holes stay resident and
the 4 MiB ones grow the heap past them (G about 1.5 x L); the exact capture's settings
(docs/capture.md, "Memory") keep G near L. One SGD step, so the capture keeps a trace."""
import sys

import torch

MiB = 1 << 20


def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) << 10
    return 0


def floats(mib):
    return torch.ones(mib * MiB // 4, device="cuda")


base = rss()
first = floats(2)
del first  # glibc's default: this free raises the mmap threshold above 2 MiB
small = [floats(2) for _ in range(100)]
del small[::2]  # 50 holes of 2 MiB between live tensors
large = [floats(4) for _ in range(25)]
live = sum(t.numel() * t.element_size() for t in small + large)
print(f"host RSS grew {(rss() - base) // MiB} MiB for {live // MiB} MiB of live tensors",
      file=sys.stderr)

model = torch.nn.Linear(8, 8).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(4, 8, device="cuda")).sum().backward()
opt.step()
