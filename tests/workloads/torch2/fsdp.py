#!/usr/bin/env python3
"""A small Llama-style decoder (transformers' LlamaConfig) sharded with FSDP2
(`fully_shard` on each decoder layer, then the whole model), AdamW, one process per GPU as
torchrun starts it.

    torchrun --nproc-per-node N fsdp.py [--size 7b] [--layers L] [--hidden H] [--batch B]
             [--seq S] [--steps N] [--no-reshard] [--meta-init | --host-init] [--mp bf16]
             [--offload]
             [--fsdp1 [--sharding full|grad-op|none]]

--size 7b is Llama-2-7B's shape (32 layers, hidden 4096, 32 heads, FFN 11008, vocabulary
32000), built from the config (nothing downloaded); the other sizes then do not apply.
--meta-init builds the model on the meta device, shards it, then gives each rank's shards
their storage on the GPU (`to_empty`), FSDP2's recipe for a model larger than one GPU; the
values stay uninitialised (this workload is about memory).
--fsdp1 shards with FSDP1 instead (`FullyShardedDataParallel`, one unit per decoder layer by
`transformer_auto_wrap_policy`, FULL_SHARD); --sharding grad-op is SHARD_GRAD_OP (the
parameters stay gathered from the forward to the backward), none is NO_SHARD (a whole
replica on every rank, as DDP keeps).
--mp bf16: parameters gathered and computed in bf16, gradients reduced in fp32, the sharded
parameters kept in fp32 (FSDP2's MixedPrecisionPolicy, FSDP1's MixedPrecision).
--host-init builds the model on the host, for FSDP to move it to the GPU as it shards it
(the usual recipe with --offload).
--offload: the sharded parameters, their gradients and AdamW's state on the host (FSDP2's
CPUOffloadPolicy, pinned; FSDP1's CPUOffload(offload_params=True)); the optimizer steps on
the CPU."""
import functools

import torch
import torch.distributed as dist
from torch.distributed.fsdp import (CPUOffload, CPUOffloadPolicy, FullyShardedDataParallel,
                                    MixedPrecision, MixedPrecisionPolicy, ShardingStrategy)
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer

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
    p.add_argument("--size", choices=["small", "7b"], default="small")
    p.add_argument("--meta-init", action="store_true", help="shard on meta, then to_empty")
    p.add_argument("--fsdp1", action="store_true", help="FullyShardedDataParallel, not fully_shard")
    p.add_argument("--mp", choices=["bf16"], help="bf16 parameters, fp32 gradient reduction")
    p.add_argument("--offload", action="store_true", help="shards and AdamW's state on the host")
    p.add_argument("--host-init", action="store_true",
                   help="build the model on the host; FSDP moves it to the GPU")
    p.add_argument("--sharding", choices=list(STRATEGIES), default="full",
                   help="FSDP1's ShardingStrategy")
    args = p.parse_args()
    if args.fsdp1 and (args.meta_init or args.no_reshard):
        p.error("--fsdp1 takes neither --meta-init nor --no-reshard")
    if args.sharding != "full" and not args.fsdp1:
        p.error("--sharding is FSDP1's (--fsdp1); FSDP2's counterpart is --no-reshard")
    return args


STRATEGIES = {"full": ShardingStrategy.FULL_SHARD, "grad-op": ShardingStrategy.SHARD_GRAD_OP,
              "none": ShardingStrategy.NO_SHARD}


SIZE_7B = dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008,
               num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32)


def config(args):
    """The decoder's LlamaConfig: the small one from the flags, or Llama-2-7B's shape."""
    shape = SIZE_7B if args.size == "7b" else dict(
        vocab_size=args.vocab, hidden_size=args.hidden, intermediate_size=args.hidden * 8 // 3,
        num_hidden_layers=args.layers, num_attention_heads=4, num_key_value_heads=4)
    return LlamaConfig(max_position_embeddings=args.seq, **shape)


def shard(model, args):
    """fully_shard on each decoder layer, then on the whole model (the root)."""
    policies = dict(reshard_after_forward=not args.no_reshard)
    if args.mp:
        policies["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                     reduce_dtype=torch.float32)
    if args.offload:
        policies["offload_policy"] = CPUOffloadPolicy()
    for layer in model.model.layers:
        fully_shard(layer, **policies)
    fully_shard(model, **policies)


def wrap_fsdp1(model, device, on_gpu, args):
    """FSDP1: one flat parameter per decoder layer and one for the rest (the root)."""
    policy = functools.partial(transformer_auto_wrap_policy,
                               transformer_layer_cls={LlamaDecoderLayer})
    mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if args.mp else None
    return FullyShardedDataParallel(model, auto_wrap_policy=policy,
                                    sharding_strategy=STRATEGIES[args.sharding],
                                    mixed_precision=mp,
                                    cpu_offload=CPUOffload(offload_params=args.offload),
                                    device_id=device if on_gpu else None, use_orig_params=True)


def step(model, optimizer, ids):
    """One optimizer step on a batch of token ids (their own labels)."""
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def main():
    args = arguments()
    device, _, on_gpu = rank_device()
    cfg = config(args)
    built_on = "meta" if args.meta_init else "cpu" if args.host_init else device
    with torch.device(built_on):
        model = LlamaForCausalLM(cfg)
    if args.fsdp1:
        model = wrap_fsdp1(model, device, on_gpu, args)
    else:
        shard(model, args)
    if args.meta_init:
        model.to_empty(device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(args.steps):
        step(model, optimizer, torch.randint(0, cfg.vocab_size, (args.batch, args.seq), device=device))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
