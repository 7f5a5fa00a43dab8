#!/usr/bin/env python3
"""Each collective tensor parallelism and FSDP use, once a step, on a tensor X of 16·N rows
of 256 floats (N ranks), as torchrun starts it; an SGD step on a small parameter ends each
step. --check TRACE reads a fast-mode trace of it and checks, for step 2, what a GPU rank
allocates: in this order, X, the caller's all-gather output (N·X) and reduce-scatter
output (X/N); nothing for the in-place all_reduce nor for the c10d collectives writing into
them; then the functional ones' outputs, each as its CUDA kernel allocates it: all_reduce
a clone of X, all_gather_tensor N·X, reduce_scatter_tensor X/N; wait_tensor nothing (the
add after it, X); then the parameter's product and its sum.

    torchrun --nproc-per-node N collectives.py [--steps S]
    collectives.py --check TRACE --world N"""
import sys

import torch

from workload_args import parser

COLUMNS = 256


def rows(world):
    return 16 * world


def run(args):
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol

    from workload_args import rank_device
    device, _, _ = rank_device()
    group, world = dist.group.WORLD, dist.get_world_size()
    w = torch.nn.Parameter(torch.zeros(1024, device=device))
    optimizer = torch.optim.SGD([w], lr=0.1)
    for _ in range(args.steps):
        x = torch.empty(rows(world), COLUMNS, device=device)
        gathered = torch.empty(world * rows(world), COLUMNS, device=device)
        scattered = torch.empty(rows(world) // world, COLUMNS, device=device)
        dist.all_reduce(x)
        dist.all_gather_into_tensor(gathered, x)
        dist.reduce_scatter_tensor(scattered, x)
        summed = funcol.all_reduce(x, "sum", group)
        gathered = funcol.all_gather_tensor(x, 0, group)
        scattered = funcol.reduce_scatter_tensor(x, "sum", 0, group)
        after = funcol.wait_tensor(summed) + 1
        del x, gathered, scattered, summed, after
        (w * 2).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
    dist.destroy_process_group()


def check(trace, world):
    from ranks_check import read_trace
    x = 4 * rows(world) * COLUMNS
    want = [x, world * x, x // world, x, world * x, x // world, x, 4 * 1024, 4]
    got = [a["bytes"] for a in read_trace(trace) if a["it"] == 2 and a["phase"] == "other"]
    print(f"step 2's collectives, world {world}: {got} B; want {want} B")
    return got == want


def main():
    p = parser(__doc__, batch=1)
    p.add_argument("--check", metavar="TRACE")
    p.add_argument("--world", type=int, default=0)
    args = p.parse_args()
    if args.check:
        sys.exit(0 if check(args.check, args.world) else 1)
    run(args)


if __name__ == "__main__":
    main()
