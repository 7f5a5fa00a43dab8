#!/usr/bin/env python3
"""One run of GPUMemNet's real-model set (real_models_cnn.csv), as a GPU user writes it:
a torchvision model from its constructor column, random ImageNet-sized data, Adam(lr=1e-3),
CrossEntropyLoss, fp32.

    real_model_job.py --model resnet --batch-size 32 [--steps N]
"""
import argparse
import sys

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, TensorDataset


def build(name):
    m = torchvision.models
    if name == "vgg":
        model = m.vgg16()
        model.classifier[6] = nn.Linear(4096, 1000)
        return model, 224
    if name == "resnet":
        model = m.resnet50()
        model.fc = nn.Linear(2048, 1000)
        return model, 224
    if name == "mobilenet":
        return m.mobilenet_v2(weights=None, num_classes=1000), 224
    if name == "efficientnet":
        model = m.efficientnet_b0()
        model.classifier[1] = nn.Linear(1280, 1000)
        return model, 224
    if name == "inception":
        return m.inception_v3(weights=None, aux_logits=False, num_classes=1000, init_weights=False), 299
    if name == "Xception":  # timm's `xception` of the label is `legacy_xception` since timm 0.9
        import timm
        return timm.create_model("legacy_xception", pretrained=False, num_classes=1000), 224
    raise SystemExit(f"real_model_job: unknown model {name!r}")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--steps", type=int, default=1000)
    args = p.parse_args()
    model, side = build(args.model)
    device = torch.device("cuda")
    model = model.to(device)
    n = args.batch_size * 2
    data = TensorDataset(torch.randn(n, 3, side, side), torch.randint(0, 1000, (n,)))
    loader = DataLoader(data, batch_size=args.batch_size, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    done = 0
    while done < args.steps:
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            done += 1
            if done >= args.steps:
                break
    print(f"real_model_job: {done} steps", file=sys.stderr)


if __name__ == "__main__":
    main()
