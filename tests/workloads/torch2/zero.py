#!/usr/bin/env python3
"""A small Llama-style decoder (transformers' LlamaConfig, built in code) trained with
DeepSpeed ZeRO (`deepspeed.initialize` with a config dict), torch's AdamW, one process per
GPU as torchrun or DeepSpeed's launcher starts it.

    torchrun --nproc-per-node N zero.py --stage {1,2,3} [--bf16] [--layers L] [--hidden H]
             [--batch B] [--seq S] [--steps N] [--bucket N] [--prefetch N]
    deepspeed --num_gpus N zero.py --stage ...

--bucket sets ZeRO's reduce_bucket_size and allgather_bucket_size (elements), --prefetch
stage3_prefetch_bucket_size; both default to small values, so that the decoder spans
several buckets. Needs DeepSpeed (tests/venv/deepspeed.lock)."""
import deepspeed
import torch
import torch.distributed as dist
from transformers import LlamaForCausalLM

from workload_args import decoder_config, rank_device


def arguments():
    import argparse
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stage", type=int, choices=[1, 2, 3], required=True)
    p.add_argument("--bf16", action="store_true", help="bf16 weights (ZeRO keeps fp32 masters)")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--vocab", type=int, default=4096)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--steps", type=int, default=3, help="optimizer steps")
    p.add_argument("--bucket", type=int, default=200_000, help="reduce/allgather bucket, elements")
    p.add_argument("--prefetch", type=int, default=100_000, help="stage-3 prefetch, elements")
    p.add_argument("--overlap-comm", action="store_true", help="ZeRO's overlap_comm")
    p.add_argument("--local_rank", type=int, help="the deepspeed launcher's (LOCAL_RANK is read)")
    return p.parse_args()


def ds_config(args):
    """The config dict a job passes to deepspeed.initialize."""
    zero = {"stage": args.stage, "reduce_bucket_size": args.bucket,
            "allgather_bucket_size": args.bucket, "overlap_comm": args.overlap_comm,
            "contiguous_gradients": True}
    if args.stage == 3:
        # Every parameter partitioned (by default ZeRO-3 keeps small ones whole on each rank).
        zero.update(stage3_prefetch_bucket_size=args.prefetch,
                    stage3_param_persistence_threshold=0)
    return {"train_micro_batch_size_per_gpu": args.batch, "gradient_accumulation_steps": 1,
            "zero_optimization": zero, "bf16": {"enabled": args.bf16},
            "zero_allow_untested_optimizer": True}


def build(args):
    """The decoder; under ZeRO-3 its parameters are partitioned as they are made."""
    cfg = decoder_config(args.vocab, args.hidden, args.layers, args.seq)
    if args.stage == 3:
        with deepspeed.zero.Init(config_dict_or_path=ds_config(args)):
            return cfg, LlamaForCausalLM(cfg)
    return cfg, LlamaForCausalLM(cfg)


def main():
    args = arguments()
    device, _, _ = rank_device()
    cfg, model = build(args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer,
                                           config=ds_config(args))
    for _ in range(args.steps):
        ids = torch.randint(0, cfg.vocab_size, (args.batch, args.seq), device=device)
        loss = engine(input_ids=ids, labels=ids).loss
        engine.backward(loss)
        engine.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
