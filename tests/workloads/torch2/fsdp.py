#!/usr/bin/env python3
"""A small Llama-style decoder (transformers' LlamaConfig) sharded with FSDP2
(`fully_shard` on each decoder layer, then the whole model), AdamW, one process per GPU as
torchrun starts it.

    torchrun --nproc-per-node N fsdp.py [--size 7b] [--layers L] [--hidden H] [--batch B]
             [--seq S] [--steps N] [--no-reshard] [--meta-init] [--fsdp1]

--size 7b is Llama-2-7B's shape (32 layers, hidden 4096, 32 heads, FFN 11008, vocabulary
32000), built from the config (nothing downloaded); the other sizes then do not apply.
--meta-init builds the model on the meta device, shards it, then gives each rank's shards
their storage on the GPU (`to_empty`), FSDP2's recipe for a model larger than one GPU; the
values stay uninitialised (this workload is about memory).
--fsdp1 shards with FSDP1 instead (`FullyShardedDataParallel`, one unit per decoder layer by
`transformer_auto_wrap_policy`, FULL_SHARD)."""
import functools

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer

from workload_args import decoder_config, parser, rank_device

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
    args = p.parse_args()
    if args.fsdp1 and (args.meta_init or args.no_reshard):
        p.error("--fsdp1 takes neither --meta-init nor --no-reshard")
    return args


SIZE_7B = dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008,
               num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32)


def config(args):
    """The decoder's LlamaConfig: the small one from the flags, or Llama-2-7B's shape."""
    if args.size == "7b":
        return LlamaConfig(max_position_embeddings=args.seq, **SIZE_7B)
    return decoder_config(args.vocab, args.hidden, args.layers, args.seq)


def shard(model, reshard):
    """fully_shard on each decoder layer, then on the whole model (the root)."""
    for layer in model.model.layers:
        fully_shard(layer, reshard_after_forward=reshard)
    fully_shard(model, reshard_after_forward=reshard)


def wrap_fsdp1(model, device, on_gpu):
    """FSDP1: one flat parameter per decoder layer and one for the rest (the root)."""
    policy = functools.partial(transformer_auto_wrap_policy,
                               transformer_layer_cls={LlamaDecoderLayer})
    return FullyShardedDataParallel(model, auto_wrap_policy=policy,
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
    with torch.device("meta" if args.meta_init else device):
        model = LlamaForCausalLM(cfg)
    if args.fsdp1:
        model = wrap_fsdp1(model, device, on_gpu)
    else:
        shard(model, not args.no_reshard)
    if args.meta_init:
        model.to_empty(device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(args.steps):
        step(model, optimizer, torch.randint(0, cfg.vocab_size, (args.batch, args.seq), device=device))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
