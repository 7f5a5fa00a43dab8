#!/usr/bin/env python3
"""A small Llama-style decoder (transformers' LlamaConfig) sharded with FSDP2
(`fully_shard` on each decoder layer, then the whole model), AdamW, one process per GPU as
torchrun starts it.

    torchrun --nproc-per-node N fsdp.py [--layers L] [--hidden H] [--batch B] [--seq S]
             [--steps N] [--no-reshard]"""

import torch
import torch.distributed as dist
from transformers import LlamaConfig, LlamaForCausalLM

from workload_args import parser, rank_device

try:
    from torch.distributed.fsdp import fully_shard
except ImportError:  # torch 2.4-2.5
    from torch.distributed._composable.fsdp import fully_shard


def arguments():
    p = parser(__doc__, batch=2)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--vocab", type=int, default=4096)
    p.add_argument("--no-reshard", action="store_true", help="reshard_after_forward=False")
    return p.parse_args()


def main():
    args = arguments()
    device, _, _ = rank_device()
    config = LlamaConfig(vocab_size=args.vocab, hidden_size=args.hidden,
                         intermediate_size=args.hidden * 8 // 3, num_hidden_layers=args.layers,
                         num_attention_heads=4, num_key_value_heads=4,
                         max_position_embeddings=args.seq)
    with torch.device(device):
        model = LlamaForCausalLM(config)
    reshard = not args.no_reshard
    for layer in model.model.layers:
        fully_shard(layer, reshard_after_forward=reshard)
    fully_shard(model, reshard_after_forward=reshard)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(args.steps):
        ids = torch.randint(0, args.vocab, (args.batch, args.seq), device=device)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
