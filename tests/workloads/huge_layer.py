"""A model with one layer whose activations dwarf the rest (issue 30's attribution tests).

Huge's forward keeps three 256 x 16384 fp32 tensors (16 MiB each) for backward; the layers
around it hold kilobytes. Three SGD steps on "cuda".
"""
import torch
from torch import nn


class Huge(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(64, 16384) * 0.01)

    def forward(self, x):
        h = x @ self.w
        return torch.tanh(h) * h


model = nn.Sequential()
model.add_module("small", nn.Linear(64, 64))
model.add_module("huge", Huge())
model.add_module("head", nn.Linear(16384, 10))
model = model.cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(256, 64, device="cuda")
    y = torch.randint(0, 10, (256,), device="cuda")
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
