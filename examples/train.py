#!/usr/bin/env python3
"""A small image classifier trained the way GPU users write it: model and batches moved to
"cuda", Adam, a few steps per epoch. xmem's demo submits it with `sbatch --xmem`.

    python3 train.py --epochs 1 --batch-size 64 --width 256
"""
import argparse

import torch
import torch.nn as nn


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--steps", type=int, default=20, help="optimizer steps per epoch")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--width", type=int, default=256, help="channels of the widest layer")
    p.add_argument("--image-size", type=int, default=64)
    args = p.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    w = args.width
    model = nn.Sequential(
        nn.Conv2d(3, w // 4, 3, padding=1), nn.BatchNorm2d(w // 4), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(w // 4, w // 2, 3, padding=1), nn.BatchNorm2d(w // 2), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(w // 2, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(w, 1000),
    ).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        for step in range(args.steps):
            x = torch.randn(args.batch_size, 3, args.image_size, args.image_size, device=device)
            y = torch.randint(0, 1000, (args.batch_size,), device=device)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: loss {loss.item():.3f} on {device}", flush=True)


if __name__ == "__main__":
    main()
