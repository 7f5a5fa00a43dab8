#!/usr/bin/env python3
"""Scripts that meet fast mode's fake GPU where they do not expect it (test 9b):

    fake_device.py kernel [--steps N]    # picks a kernel by the model's device before
                                         # .cuda(), and rejects devices it has no kernel
                                         # for, as transformers' hub kernels do
    fake_device.py cpu [--steps N]       # never asks for the GPU (a forgotten --cuda)
    fake_device.py encoder [--steps N]   # nn.TransformerEncoder evaluated with a padding
                                         # mask (torch's fast-path check), then trained
"""
import argparse

import torch


def kernel_for(device):
    """The lookup hub kernels make: a device type without kernels is an error."""
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"Unsupported device type '{device.type}'. Supported device types "
                         "are: cpu, cuda")
    return torch.nn.functional.gelu


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))


def train(model, batches, steps):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(steps):
        x, y = batches()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"loss {loss.item():.4f}")


def kernel(steps):
    model = mlp()
    model[1].forward = kernel_for(next(model.parameters()).device)
    model = model.cuda()
    train(model, lambda: (torch.randn(8, 64, device="cuda"), torch.randn(8, 64, device="cuda")),
          steps)


def cpu(steps):
    device = torch.device("cpu")  # what `--cuda` would have made "cuda"
    model = mlp().to(device)
    train(model, lambda: (torch.randn(8, 64).to(device), torch.randn(8, 64).to(device)), steps)


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(64, 4, 256, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=True)
        self.head = torch.nn.Linear(64, 64)

    def forward(self, x, padding):
        return self.head(self.encoder(x, src_key_padding_mask=padding))


def encoder(steps):
    model = Encoder().cuda()
    x = torch.randn(4, 32, 64, device="cuda")
    padding = torch.zeros(4, 32, dtype=torch.bool, device="cuda")
    padding[:, 24:] = True
    model.eval()
    with torch.no_grad():  # validation: the encoder checks its fast path here
        model(x, padding)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(steps):
        x = torch.randn(4, 32, 64, device="cuda")
        loss = model(x, padding).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=["kernel", "cpu", "encoder"])
    p.add_argument("--steps", type=int, default=3)
    args = p.parse_args()
    {"kernel": kernel, "cpu": cpu, "encoder": encoder}[args.case](args.steps)


if __name__ == "__main__":
    main()
