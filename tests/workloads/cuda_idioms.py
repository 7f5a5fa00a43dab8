#!/usr/bin/env python3
"""A small training script that leans on every CUDA idiom xmem-profile must keep working:
device queries, device='cuda' factories, .cuda()/.to(device, non_blocking), is_cuda,
cudnn/tf32 flags, pin_memory, CUDA events, memory statistics, empty_cache,
torch.save + torch.load(map_location='cuda:0'), autocast + GradScaler, DataParallel.
Asserts as it goes, so a broken shim fails here rather than silently mis-tracing."""
import os
import sys
import tempfile

import torch
import torch.nn as nn


def main():
    assert torch.cuda.is_available() and torch.cuda.device_count() >= 1
    torch.cuda.set_device(0)
    print("device:", torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    device = torch.device("cuda:0")

    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
    model = nn.DataParallel(model).cuda()
    assert next(model.parameters()).is_cuda
    assert next(model.parameters()).device.type == "cuda"
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ckpt.pt")
        torch.save(model.module.state_dict(), path)
        state = torch.load(path, map_location="cuda:0")
        assert all(t.is_cuda for t in state.values())
        model.module.load_state_dict(state)
        del state

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.cuda.amp.GradScaler()
    data = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(32, 3, 16, 16), torch.randint(0, 4, (32,))),
        batch_size=4, pin_memory=True)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    bias = torch.zeros(4, device="cuda")
    assert bias.is_cuda and bias.get_device() == 0
    for epoch in range(100):
        for images, labels in data:
            start.record()
            images = images.to(device, non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            assert images.is_cuda and not images.cpu().is_cuda
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(images) + bias
                loss = nn.functional.cross_entropy(logits, labels)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            end.record()
            torch.cuda.synchronize()
            assert torch.cuda.memory_allocated() > 0
            assert torch.cuda.max_memory_allocated() >= torch.cuda.memory_allocated()
            print(f"loss {loss.item():.3f} {start.elapsed_time(end):.1f} ms", flush=True)
        torch.cuda.empty_cache()
    sys.exit("the capture should have stopped this script")


if __name__ == "__main__":
    main()
