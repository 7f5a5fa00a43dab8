#!/usr/bin/env python3
"""Runs a CUDA training script on the CPU *without* xmem, for the speed baseline of
`make bench-estimate`: `.cuda()` becomes the identity and torch.cuda reports no GPU, so the
script's own CPU fallbacks run, with no capture, no device mode and no tracing.

    plain_run.py [--threads N] SCRIPT ARGS...

Intra-op threads follow xmem-profile's rule (docs/capture.md, Threads), so both runs compute
with the same number: all CPUs in the affinity mask unless --threads N, set in
OMP_NUM_THREADS/MKL_NUM_THREADS before torch loads and by torch.set_num_threads.
"""
import os
import runpy
import sys

args = sys.argv[1:]
threads = len(os.sched_getaffinity(0)) or 1
if args[:1] == ["--threads"] and len(args) > 1:
    threads = int(args[1])
    args = args[2:]
if not args:
    sys.exit("usage: plain_run.py [--threads N] SCRIPT ARGS...")
os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(threads)

import torch  # noqa: E402 (OpenMP reads OMP_NUM_THREADS when torch loads)

torch.set_num_threads(threads)
torch.Tensor.cuda = lambda self, *args, **kwargs: self
torch.nn.Module.cuda = lambda self, *args, **kwargs: self
torch.cuda.is_available = lambda: False

script = args[0]
sys.argv = args
sys.path.insert(0, os.path.dirname(script))
runpy.run_path(script, run_name="__main__")
