#!/usr/bin/env python3
"""Two peer estimators on one workload, for `make bench-accuracy` (run with torch 2.x):

1. PyTorch's own torch.distributed._tools.mem_tracker.MemTracker, with the model, data and
   optimizer made under FakeTensorMode on device cuda (no memory, no GPU), over --steps
   training steps; its figure is the tracked peak ("Total" at the peak snapshot).
2. accelerate estimate-memory's figure: "Training using Adam" for the model's dtype, i.e.
   accelerate's own calculate_maximum_sizes() and estimate_training_usage() on the model made
   on the meta device. The `accelerate estimate-memory` command itself cannot run here: it
   asks the Hub for the model's metadata first, even for a local directory holding a
   config.json, and there is no Hub access. It does not depend on the batch size.

    peers.py real --model resnet --batch-size 32      (GPUMemNet's real-model set)
    peers.py hf --arch gpt2 --size full --batch 8 --seq 1024
Prints one JSON line: {"memtracker_bytes": N|null, "accelerate_bytes": N|null, "errors": {...}}.
"""
import argparse
import json
import os
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "workloads", "torch2"))


def real_workload(args):
    """(make_model, make_batch, loss): GPUMemNet's real-model runs, fp32 Adam."""
    import real_model_job
    side = 299 if args.model == "inception" else 224
    criterion = nn.CrossEntropyLoss()

    def make_batch(device):
        return (torch.randn(args.batch_size, 3, side, side, device=device),
                torch.randint(0, 1000, (args.batch_size,), device=device))
    return (lambda: real_model_job.build(args.model)[0]), make_batch, lambda m, b: criterion(m(b[0]), b[1])


def hf_workload(args):
    import hf_lm
    args.lora, args.checkpointing, args.dtype = False, False, "fp32"

    def make_batch(device):
        ids = torch.randint(0, 1000, (args.batch, args.seq), device=device)
        return ids
    return (lambda: hf_lm.build(args)[0]), make_batch, lambda m, ids: m(input_ids=ids, labels=ids).loss


def memtracker_peak(make_model, make_batch, loss_of, steps, device):
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.mem_tracker import MemTracker
    with FakeTensorMode(), torch.device(device):  # made on the device: fake CPU weights cannot move
        model = make_model()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        tracker = MemTracker()
        tracker.track_external(model, optimizer)
        with tracker:
            for _ in range(steps):
                loss_of(model, make_batch(device)).backward()
                optimizer.step()
                optimizer.zero_grad()
                tracker.reset_mod_stats()  # per-module stats only; the global peak stays
    return tracker.get_tracker_snapshot("peak")[device]["Total"]


def accelerate_figure(make_model):
    from accelerate import init_empty_weights
    from accelerate.commands.estimate import estimate_training_usage
    from accelerate.utils import calculate_maximum_sizes
    with init_empty_weights():
        model = make_model()
    total, _ = calculate_maximum_sizes(model)
    return max(estimate_training_usage(total, "float32").values())


def one_line(e):
    text = str(e).splitlines()[0][:200] if str(e) else ""
    return f"{type(e).__name__}: {text}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="kind", required=True)
    real = sub.add_parser("real")
    real.add_argument("--model", required=True)
    real.add_argument("--batch-size", type=int, required=True)
    hf = sub.add_parser("hf")
    hf.add_argument("--arch", required=True)
    hf.add_argument("--size", default="tiny")
    hf.add_argument("--batch", type=int, default=2)
    hf.add_argument("--seq", type=int, default=32)
    p.add_argument("--steps", type=int, default=2)
    args = p.parse_args()
    make_model, make_batch, loss_of = (real_workload if args.kind == "real" else hf_workload)(args)
    out = {"memtracker_bytes": None, "memtracker_device": None, "accelerate_bytes": None, "errors": {}}
    # Without a GPU, autograd's engine refuses fake CUDA tensors in backward
    # ("hasPrimaryContext expects a valid device index"): then fake CPU tensors, same sizes.
    for device in (torch.device("cuda", 0), torch.device("cpu")):
        try:
            out["memtracker_bytes"] = int(memtracker_peak(make_model, make_batch, loss_of, args.steps, device))
            out["memtracker_device"] = device.type
            break
        except Exception as e:  # a peer that cannot run this workload is a result too
            out["errors"]["memtracker_" + device.type] = one_line(e)
    try:
        out["accelerate_bytes"] = int(accelerate_figure(make_model))
    except Exception as e:
        out["errors"]["accelerate"] = one_line(e)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
