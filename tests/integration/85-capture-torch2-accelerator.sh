#!/usr/bin/env bash
# torch 2.x, exact capture: a script in the style of today's pytorch/examples mnist, which
# picks its device with torch.accelerator and whose optimizer asks
# torch.accelerator.current_stream() in step(), is profiled and estimated on a machine with
# no GPU; torch.cuda and torch.accelerator answer as the target GPU (compute capability from
# the catalog through xmem-estimate, XMEM_GPU_CAPABILITY when profiled by hand).
source "$(dirname "$0")/85-capture-torch2-common.bash"

cat >"$TMP/mnist.py" <<'PY'
import torch, torch.nn as nn, torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

use_accel = torch.accelerator.is_available()
device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
print("accelerator", device, torch.accelerator.device_count(), torch.accelerator.current_device_index())
print("capability", torch.cuda.get_device_capability(), torch.cuda.is_bf16_supported(including_emulation=False),
      torch.get_device_module(device).get_device_properties(0).major)
torch.accelerator.set_device_index(0)
noise = torch.Generator(device=device).manual_seed(0)
print("generator", noise.device, torch.randn(2, generator=noise, device=device).device)
model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(8 * 13 * 13, 64), nn.ReLU(), nn.Linear(64, 10),
                      nn.LogSoftmax(dim=1)).to(device)
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
loader = DataLoader(TensorDataset(torch.randn(128, 1, 28, 28), torch.randint(0, 10, (128,))), batch_size=32)
for epoch in range(3):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        F.nll_loss(model(x), y).backward()
        optimizer.step()
        torch.accelerator.synchronize()
        free, total = torch.accelerator.get_memory_info()
        print("allocated", torch.accelerator.memory_allocated(), torch.accelerator.max_memory_allocated(),
              torch.accelerator.memory_stats()["allocated_bytes.all.peak"], free < total, flush=True)
    scheduler.step()
PY

XMEM_GPU_CAPABILITY=7.5 capture "$TMP/t75.trace" "$TMP/mnist.py" >"$TMP/t75.out"
expect_true "torch.accelerator did not name one CUDA device: $(head -3 "$TMP/t75.out")" \
    grep -q '^accelerator cuda 1 0$' "$TMP/t75.out"
expect_true "capability 7.5 not answered: $(grep capability "$TMP/t75.out")" \
    grep -q '^capability (7, 5) False 7$' "$TMP/t75.out"
expect_true "torch.Generator(device='cuda'): $(grep generator "$TMP/t75.out")" \
    grep -q '^generator cuda:0 cuda:0$' "$TMP/t75.out"
expect_true "3 steps not captured" [ "$(meta "$TMP/t75.trace" steps)" = 3 ]
expect_true "steps not counted at optimizer.step()" [ "$(meta "$TMP/t75.trace" step_rule)" = optimizer ]
# memory_allocated is the traced device bytes: at least the parameters (8*9+8 + 1352*64+64 +
# 64*10+10 floats) and the Adadelta state (two per parameter) after a step.
params=$(( (8 * 9 + 8 + 1352 * 64 + 64 + 64 * 10 + 10) * 4 ))
awk -v p="$params" '$1=="allocated" {n++; if ($2 < 3 * p || $3 < $2 || $4 != $3 || $5 != "True") bad=1}
    END {exit (n >= 2 && !bad) ? 0 : 1}' "$TMP/t75.out" ||
    fail "memory statistics do not follow the device bytes ($params B of parameters): $(grep allocated "$TMP/t75.out")"
peak=$(peak_g "$TMP/t75.trace")
expect_true "device peak $peak B below parameters, gradients and state" [ "$peak" -ge $(( 4 * params )) ]
echo "ok: mnist-style script captured at sm75 (device peak $peak B)"

estimate "$TMP/h100.json" --gpu H100 -- python "$TMP/mnist.py"
expect_true "xmem-estimate did not pass H100's capability 9.0" \
    grep -q '^capability (9, 0) True 9$' "$TMP/estimate.err"
expect_true "estimate did not see 3 steps" [ "$(json "$TMP/h100.json" "j['iterations']")" = 3 ]
expect_true "weights not estimated" \
    [ "$(json "$TMP/h100.json" "j['category_peak_bytes']['weights'] >= $params")" = True ]
expect_true "no torch in the estimate" [ "$(json "$TMP/h100.json" "j['torch']")" != "" ]
echo "ok: estimated for H100: peak $(json "$TMP/h100.json" "j['peak_bytes']") B"

# Module.to(device=..., dtype=...): in torch 2.x its argument parsing is a torch function, and
# the shim must not rewrite that device to the host (the parameters would stay host memory).
cat >"$TMP/to_kw.py" <<'PY'
import torch
m = torch.nn.Linear(512, 512).to(device="cuda", dtype=torch.float32)
print("param device", next(m.parameters()).device, flush=True)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for _ in range(3):
    m(torch.randn(8, 512, device="cuda")).sum().backward(); opt.step(); opt.zero_grad()
PY
capture "$TMP/to_kw.trace" "$TMP/to_kw.py" >"$TMP/to_kw.out"
expect_true "Module.to(device='cuda', dtype=...) left the parameters on the host" \
    grep -q '^param device cuda:0$' "$TMP/to_kw.out"
peak=$(peak_g "$TMP/to_kw.trace")
expect_true "device peak $peak B below the parameters and gradients of to(device=..., dtype=...)" \
    [ "$peak" -ge $(( 2 * 512 * 513 * 4 )) ]
echo "ok: Module.to with keywords moves the parameters (device peak $peak B)"
