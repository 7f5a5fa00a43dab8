#!/usr/bin/env python3
"""Runs a CUDA training script on the CPU *without* xmem, for the speed baseline of
`make bench-estimate`: `.cuda()` becomes the identity and torch.cuda reports no GPU, so the
script's own CPU fallbacks run, with no capture, no device mode and no tracing.

    plain_run.py SCRIPT ARGS...
"""
import runpy
import sys

import torch

torch.Tensor.cuda = lambda self, *args, **kwargs: self
torch.nn.Module.cuda = lambda self, *args, **kwargs: self
torch.cuda.is_available = lambda: False

script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, __import__("os").path.dirname(script))
runpy.run_path(script, run_name="__main__")
