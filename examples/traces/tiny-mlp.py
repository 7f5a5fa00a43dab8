# A tiny MLP trained with Adam for 3 steps; examples/traces/tiny-mlp.xtrace is its capture:
#   xmem-profile --out examples/traces/tiny-mlp.xtrace examples/traces/tiny-mlp.py
import torch
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(3):
    x = torch.randn(64, 256).cuda()
    y = torch.randint(0, 10, (64,)).cuda()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
