#!/usr/bin/env python3
"""Writes a TorchScript conv net and its xmem-profile-libtorch job spec into OUTDIR.

  torchscript_job.py OUTDIR [--batch-size N] [--image-size N] [--optimizer sgd|adam|adamw]
Prints the parameter bytes of the model (what iteration 0 must account on the device).
"""
import argparse
import os

import torch
import torch.nn as nn


class SmallConvNet(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("outdir")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--image-size", type=int, default=32)
    p.add_argument("--optimizer", default="adam", choices=["sgd", "adam", "adamw"])
    args = p.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    model = SmallConvNet()
    torch.jit.script(model).save(os.path.join(args.outdir, "model.pt"))
    extra = "momentum: 0.9" if args.optimizer == "sgd" else "betas: [0.9, 0.999]"
    with open(os.path.join(args.outdir, "job.yaml"), "w") as f:
        f.write(f"""module: model.pt
batch_size: {args.batch_size}
iterations: 3
inputs:
  - shape: [3, {args.image_size}, {args.image_size}]
    dtype: float32
target: {{shape: [], dtype: int64, classes: 10}}
loss: cross_entropy
optimizer: {{name: {args.optimizer}, lr: 0.001, {extra}}}
""")
    print(sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers())))


if __name__ == "__main__":
    main()
