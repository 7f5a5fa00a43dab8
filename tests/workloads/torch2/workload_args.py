"""What every torch 2.x workload shares: the device a GPU user asks for, and the flags.

The scripts ask for CUDA as real jobs do. XMEM_WORKLOAD_DEVICE=cpu runs them plainly on a
machine without a GPU, only to check that they train (tests do not set it under xmem)."""
import argparse
import os

import torch


def training_device(wanted="cuda"):
    """WANTED (what the script asks for), or what XMEM_WORKLOAD_DEVICE names (the plain CPU check)."""
    return torch.device(os.environ.get("XMEM_WORKLOAD_DEVICE", wanted))


def parser(doc, batch, steps=5):
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=batch)
    p.add_argument("--steps", type=int, default=steps, help="optimizer steps")
    p.add_argument("--amp", choices=["bf16", "fp16"], help="torch.autocast('cuda'); fp16 adds GradScaler('cuda')")
    p.add_argument("--checkpointing", action="store_true", help="activation checkpointing")
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    return p


AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def autocast(args):
    """torch.autocast('cuda', dtype) as the user writes it; disabled without --amp."""
    return torch.autocast("cuda", dtype=AMP_DTYPES.get(args.amp, torch.float16), enabled=bool(args.amp))


def grad_scaler(args):
    """GradScaler('cuda'): only fp16 needs one (bf16 has fp32's range)."""
    return torch.amp.GradScaler("cuda", enabled=args.amp == "fp16")


def optimizer_step(loss, optimizer, scaler):
    """backward, step through the scaler (a no-op scaler when disabled), clear gradients."""
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)


def decoder_config(vocab, hidden, layers, seq, width_multiple=0):
    """The small Llama-style decoder fsdp.py and zero.py train (transformers' LlamaConfig,
    built in code), and the checks that compute its shards from its parameter shapes; the
    MLP's width rounded up to a multiple of WIDTH_MULTIPLE (0: not rounded)."""
    from transformers import LlamaConfig
    width = hidden * 8 // 3
    width += -width % width_multiple if width_multiple else 0
    return LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=width,
                       num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=4,
                       max_position_embeddings=seq)


def rank_device():
    """A torchrun rank's start: its process group (NCCL on GPUs, gloo for the plain CPU check)
    and its GPU, cuda:LOCAL_RANK. Returns (device, local_rank, on_gpu)."""
    import torch.distributed as dist
    local_rank = int(os.environ["LOCAL_RANK"])
    on_gpu = "XMEM_WORKLOAD_DEVICE" not in os.environ
    dist.init_process_group("nccl" if on_gpu else "gloo")
    if on_gpu:
        torch.cuda.set_device(local_rank)
    return training_device(f"cuda:{local_rank}"), local_rank, on_gpu
