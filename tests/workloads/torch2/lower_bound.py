#!/usr/bin/env python3
"""The least GPU memory a workload's training step can hold, from its model alone: the
weights, plus for every trainable parameter its gradient and the optimizer's state (AdamW:
two tensors of the parameter's dtype; a script's OPTIMIZER_STATES says otherwise). The model
is built on the meta device, so a 7B shape costs nothing. Tests check an estimate is above it.

    lower_bound.py SCRIPT.py ARGS...    (prints bytes)"""
import importlib
import os
import sys

import torch


def lower_bound(script, argv):
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    module = importlib.import_module(os.path.splitext(os.path.basename(script))[0])
    args = module.arguments(argv)
    with torch.device("meta"):
        model = module.build_model(args)
    states = getattr(module, "OPTIMIZER_STATES", 2)
    total = 0
    for p in model.parameters():
        size = p.numel() * p.element_size()
        total += size + (size * (1 + states) if p.requires_grad else 0)
    return total


if __name__ == "__main__":
    print(lower_bound(sys.argv[1], sys.argv[2:]))
