#!/usr/bin/env python3
"""A torchvision classifier under DistributedDataParallel, one process per GPU, as torchrun
starts it (RANK, LOCAL_RANK, WORLD_SIZE from the environment); SGD with momentum.

    torchrun --nproc-per-node N ddp.py --model resnet50 [--bucket-cap-mb MB]
             [--gradient-as-bucket-view] [--batch B] [--image-size N] [--steps N]"""

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel

from workload_args import parser, rank_device


def arguments():
    p = parser(__doc__, batch=2)
    p.add_argument("--model", default="resnet50")
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--bucket-cap-mb", type=float, default=None, help="DDP's default: 25")
    p.add_argument("--gradient-as-bucket-view", action="store_true")
    return p.parse_args()


def main():
    args = arguments()
    device, local_rank, on_gpu = rank_device()
    model = getattr(torchvision.models, args.model)(weights=None, num_classes=args.classes)
    options = {} if args.bucket_cap_mb is None else {"bucket_cap_mb": args.bucket_cap_mb}
    model = DistributedDataParallel(model.to(device), device_ids=[local_rank] if on_gpu else None,
                                    gradient_as_bucket_view=args.gradient_as_bucket_view,
                                    **options)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(args.steps):
        x = torch.randn(args.batch, 3, args.image_size, args.image_size, device=device)
        y = torch.randint(0, args.classes, (args.batch,), device=device)
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        optimizer.step()
    if dist.get_rank() == 0:
        print(f"loss {loss_fn(model(x), y).item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
