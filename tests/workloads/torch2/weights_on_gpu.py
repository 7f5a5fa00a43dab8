#!/usr/bin/env python3
"""A small model's weights reach the GPU the ways fine-tuning scripts put them there, then
AdamW trains it (test 9a: the weights in fast mode's trace are the exact capture's).

    weights_on_gpu.py save DIR            # plain Python, before any capture: the checkpoints
    weights_on_gpu.py WAY DIR [--steps N]

WAY: `from_pretrained` (transformers, device_map="cuda": its loader moves the checkpoint's
tensors to the GPU in a thread pool), `dispatch` (accelerate's init_empty_weights and
load_checkpoint_and_dispatch), `to_empty` (a model built on the meta device), `assign`
(load_state_dict(assign=True) of torch.load(map_location="cuda")), `safetensors`
(safetensors' load_file(device="cuda")), `threaded` (each weight copied to the GPU and
scaled there in a thread pool: an op on a thread fast mode does not trace, which its
weights check refuses).
"""
import argparse
import os

import torch

SIZES = dict(n_layer=2, n_embd=256, n_head=4, vocab_size=4096, n_positions=128)


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    return GPT2LMHeadModel(GPT2Config(**SIZES, tie_word_embeddings=False))


def mlp():
    return torch.nn.Sequential(torch.nn.Embedding(4096, 256), torch.nn.Linear(256, 1024),
                               torch.nn.GELU(), torch.nn.Linear(1024, 4096))


def save(directory):
    """The checkpoints, written by plain Python: fast mode has no values to write."""
    from safetensors.torch import save_file
    gpt2().save_pretrained(os.path.join(directory, "gpt2"))
    model = mlp()
    torch.save(model.state_dict(), os.path.join(directory, "pytorch_model.bin"))
    save_file(model.state_dict(), os.path.join(directory, "model.safetensors"))


def load(way, directory):
    if way == "from_pretrained":
        from transformers import GPT2LMHeadModel
        # use_kernels=False: hub kernels need the network (the login node has none).
        return GPT2LMHeadModel.from_pretrained(os.path.join(directory, "gpt2"),
                                               device_map="cuda", use_kernels=False)
    checkpoint = os.path.join(directory, "pytorch_model.bin")
    if way == "dispatch":
        from accelerate import init_empty_weights, load_checkpoint_and_dispatch
        with init_empty_weights():
            model = mlp()
        return load_checkpoint_and_dispatch(model, checkpoint, device_map={"": 0})
    if way == "to_empty":
        with torch.device("meta"):
            model = mlp()
        return model.to_empty(device="cuda")
    model = mlp()
    if way == "assign":
        state = torch.load(checkpoint, map_location="cuda")
    elif way == "threaded":
        from concurrent.futures import ThreadPoolExecutor
        state = torch.load(checkpoint)
        with ThreadPoolExecutor(2) as pool:
            scaled = pool.map(lambda t: t.cuda() * 0.5, state.values())
            state = dict(zip(state.keys(), scaled))
    elif way == "safetensors":
        from safetensors.torch import load_file
        state = load_file(os.path.join(directory, "model.safetensors"), device="cuda")
    else:
        raise SystemExit(f"unknown way {way}")
    model.load_state_dict(state, assign=True)
    return model


def main():
    p = argparse.ArgumentParser()
    p.add_argument("way")
    p.add_argument("dir")
    p.add_argument("--steps", type=int, default=3)
    args = p.parse_args()
    if args.way == "save":
        return save(args.dir)
    model = load(args.way, args.dir)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(args.steps):
        ids = torch.randint(0, 4096, (2, 64), device="cuda")
        if args.way == "from_pretrained":
            loss = model(ids, labels=ids).loss
        else:
            loss = torch.nn.functional.cross_entropy(model(ids).flatten(0, 1), ids.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
