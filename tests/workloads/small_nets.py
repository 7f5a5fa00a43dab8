#!/usr/bin/env python3
"""Two tiny training scripts for comparing captures (test 94): an MLP with AdamW and a CNN
(conv, batch norm, pooling) with SGD + momentum. `small_nets.py mlp|cnn [--steps N]`."""
import sys

import torch
import torch.nn as nn


def build(arch):
    if arch == "mlp":
        model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(),
                              nn.Linear(2048, 10))
        return model, (64, 512), lambda p: torch.optim.AdamW(p, lr=1e-4)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
    return model, (16, 3, 64, 64), lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)


def main():
    arch = sys.argv[1]
    model, shape, make_optimizer = build(arch)
    model = model.cuda()
    optimizer = make_optimizer(model.parameters())
    for _ in range(3):
        x, y = torch.randn(*shape).cuda(), torch.randint(0, 10, (shape[0],)).cuda()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main()
