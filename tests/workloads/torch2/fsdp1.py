#!/usr/bin/env python3
"""The decoder of fsdp.py sharded with FSDP1 (`FullyShardedDataParallel`, one unit per
decoder layer by `transformer_auto_wrap_policy`, FULL_SHARD), AdamW, one process per GPU as
torchrun starts it.

    torchrun --nproc-per-node N fsdp1.py [--layers L] [--hidden H] [--batch B] [--seq S]
             [--steps N]"""
import functools

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer

from workload_args import parser, rank_device


def main():
    p = parser(__doc__, batch=2)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--vocab", type=int, default=4096)
    args = p.parse_args()
    device, _, on_gpu = rank_device()
    config = LlamaConfig(vocab_size=args.vocab, hidden_size=args.hidden,
                         intermediate_size=args.hidden * 8 // 3, num_hidden_layers=args.layers,
                         num_attention_heads=4, num_key_value_heads=4,
                         max_position_embeddings=args.seq)
    policy = functools.partial(transformer_auto_wrap_policy,
                               transformer_layer_cls={LlamaDecoderLayer})
    model = FullyShardedDataParallel(LlamaForCausalLM(config).to(device),
                                     auto_wrap_policy=policy,
                                     device_id=device if on_gpu else None,
                                     use_orig_params=True)
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
