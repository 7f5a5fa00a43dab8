#!/usr/bin/env python3
"""PyTorch's own FSDPMemTracker (torch.distributed._tools.fsdp2_mem_tracker) on the model
and steps of tests/workloads/torch2/fsdp.py, for one rank of N, on a machine without the
GPUs: fake tensors (FakeTensorMode) and torch's fake process group.
Prints one JSON line: the tracker's peak (bytes of live tensors, by its categories), and the
seconds it took.

    fsdp_mem_tracker.py --world N --rank R [fsdp.py's flags: --size 7b --batch B --seq S
                        --steps S]

Where it differs from a GPU rank, and why (docs/bench.md, "Multi-GPU estimates"): the fake
tensors are on the CPU. FSDPMemTracker's fake CUDA tensors need FSDP2's device mesh on CUDA,
and making that mesh asks the CUDA driver for a device, which a machine without a GPU lacks
("Found no NVIDIA driver"); so attention takes the CPU's SDPA path, not a GPU's. The model
is built on the meta device and given fake storage by to_empty inside the fake mode:
transformers' weight init reads values, which fake tensors refuse.
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "workloads", "torch2"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.distributed._tools.fsdp2_mem_tracker import FSDPMemTracker  # noqa: E402
from torch.testing._internal.distributed.fake_pg import FakeStore  # noqa: E402
from transformers import LlamaForCausalLM  # noqa: E402

import fsdp  # noqa: E402


def arguments():
    sys.argv, rest = sys.argv[:1], sys.argv[1:]
    world = rank = None
    kept = []
    while rest:
        flag = rest.pop(0)
        if flag == "--world":
            world = int(rest.pop(0))
        elif flag == "--rank":
            rank = int(rest.pop(0))
        else:
            kept.append(flag)
    if world is None or rank is None:
        sys.exit("xmem: fsdp_mem_tracker.py: --world N and --rank R are required")
    sys.argv += kept
    return world, rank, fsdp.arguments()


def main():
    world, rank, args = arguments()
    start = time.monotonic()
    dist.init_process_group("fake", rank=rank, world_size=world, store=FakeStore())
    cfg = fsdp.config(args)
    with torch.device("meta"):
        model = LlamaForCausalLM(cfg)
    fsdp.shard(model, args)
    with FakeTensorMode(allow_non_fake_inputs=True):
        model.to_empty(device="cpu")
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        tracker = FSDPMemTracker(model, optimizer)
        ids = torch.randint(0, cfg.vocab_size, (args.batch, args.seq))
        tracker.track_inputs((ids,))
        with tracker:
            for _ in range(args.steps):
                fsdp.step(model, optimizer, ids)
                tracker.reset_mod_stats()  # it tracks one step's module stats at a time
        peak = tracker.get_tracker_snapshot("peak")
    dist.destroy_process_group()
    (snapshot,) = peak.values()
    out = {"peak_bytes": snapshot["Total"], "seconds": round(time.monotonic() - start, 2),
           "categories": {str(getattr(k, "value", k)): v for k, v in snapshot.items()
                          if k != "Total"}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
