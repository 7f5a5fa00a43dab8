#!/usr/bin/env python3
"""Checks one rank's fast-mode trace of `fsdp.py --tp N` (tensor parallelism alone, N ranks)
against what torch does on a GPU rank, computed here from the model's parameter shapes and
fsdp.py's own plan (tests/integration/102-*).

    tp_check.py TRACE ESTIMATE.json --world N --rank R [--dp D]
                [--loss-parallel [--sequence-parallel]] [--batch B] [--seq S]

Weights and gradients: each ColwiseParallel Linear keeps its rank's chunk of the output
features (dim 0 of the weight), each RowwiseParallel one its chunk of the input features
(dim 1), as torch.chunk splits them (the last ranks get fewer rows when N does not divide);
embeddings, norms and the head stay whole. AdamW's state is twice that. Activations: the
column-parallel projections' outputs (q/k/v; the MLP's gate, up, its activation and their
product) are 1/N as wide as on one GPU. Collectives: each row-parallel output is summed by a
functional all-reduce, whose CUDA kernel clones its input (one activation-sized output);
each column-parallel input's gradient likewise in the backward; waiting on them allocates
nothing. With --dp D (`fsdp.py --tp N/D` on N ranks: 2-D) FSDP2 then keeps each rank's
dim-0 shard of every parameter's TP share over D ranks, padded to a multiple of D rows. With --loss-parallel (fsdp.py's) the head is column-parallel
too: 1/N of its weight and of the logits, and the loss's log-softmax sums three token-sized
values over the ranks in the forward (the maximum, the exponentials' sum, the target's
logit), and the head's input gradient one hidden-states-sized in the backward. With
--sequence-parallel too, the embeddings keep 1/N of their rows, the norms' outputs are 1/N
of the sequence, and each all-reduce becomes a reduce-scatter (output 1/N of the sequence)
after the embeddings and each block, and an all-gather (the whole sequence) before each
block and the head; the backward swaps them.
"""
import argparse
import json
import math
import sys

from fsdp import TP_PLAN, config
from ranks_check import read_trace

PREFIX = "model.layers."


def local_rows(size, world, rank):
    """Rows of dimension SIZE that RANK keeps: torch.chunk's split, as DTensor's Shard does."""
    chunk = math.ceil(size / world)
    return max(0, min(chunk, size - rank * chunk))


def local_numel(name, shape, tp, rank, dp, head):
    """Elements of parameter NAME (shape SHAPE) on RANK: a TP_PLAN Linear's shard over TP
    ranks (the head's too with HEAD), else all; then FSDP2's padded dim-0 shard of that over
    DP ranks."""
    key = name.split(".", 3)[-1].rsplit(".", 1)[0] if name.startswith(PREFIX) else None
    style = type(TP_PLAN[key]).__name__ if key in TP_PLAN else None
    if name == "lm_head.weight" and head:
        style = "ColwiseParallel"
    if name == "model.embed_tokens.weight" and head == "sequence":
        style = "ColwiseParallel"  # RowwiseParallel shards an Embedding's rows: dim 0
    shape = list(shape)
    if style is not None:
        dim = 0 if style == "ColwiseParallel" else 1
        shape[dim] = local_rows(shape[dim], tp, rank % tp)
    return math.ceil(shape[0] / dp) * math.prod(shape[1:])


def expected_bytes(cfg, args):
    """(this rank's parameter bytes, its gradients' bytes, whole model bytes): fp32. The
    gradients are the parameters' shards, but for the row-parallel embeddings under
    --sequence-parallel: DTensor's strategy for their backward (embedding_dense_backward)
    makes a replicated gradient, the whole embedding on each rank (torch does so on the CPU
    with gloo too)."""
    import torch
    from transformers import LlamaForCausalLM
    with torch.device("meta"):
        model = LlamaForCausalLM(cfg)
    named = [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    tp = args.world // args.dp
    head = "sequence" if args.sequence_parallel else args.loss_parallel
    local = sum(4 * local_numel(n, s, tp, args.rank, args.dp, head) for n, s in named)
    grads = local
    if args.sequence_parallel:
        shape = tuple(model.model.embed_tokens.weight.shape)
        grads += 4 * (math.prod(shape) - local_numel("model.embed_tokens.weight", shape, tp,
                                                     args.rank, args.dp, head))
    return local, grads, sum(4 * math.prod(s) for _, s in named)


def check_state(peaks, local, grads, full, slack):
    fails = []
    for name, want in (("weights", local), ("gradients", grads), ("optimizer_state", 2 * local)):
        got = peaks.get(name, 0)
        if not want <= got <= want + slack:
            fails.append(f"{name}: {got} B, want this rank's shards and the rest whole, {want} B "
                         f"(the whole model: {full} B)")
    return fails


def check_widths(allocs, cfg, args):
    """Step 2's forward: the column-parallel outputs are this rank's width, in each layer
    and, with --loss-parallel, the head's logits."""
    tokens, tp = 4 * args.batch * args.seq, args.world // args.dp
    heads = tokens * local_rows(cfg.hidden_size, tp, args.rank % tp)
    mlp = tokens * local_rows(cfg.intermediate_size, tp, args.rank % tp)
    want = {"self_attn.q_proj|": heads, "self_attn.k_proj|": heads, "self_attn.v_proj|": heads,
            "mlp.gate_proj|": mlp, "mlp.up_proj|": mlp, "mlp.act_fn|": mlp, "mlp|aten::mul": mlp}
    times = dict.fromkeys(want, cfg.num_hidden_layers)
    if args.loss_parallel:
        want["lm_head|aten::linear"] = tokens * local_rows(cfg.vocab_size, tp, args.rank % tp)
        times["lm_head|aten::linear"] = 1
    if args.sequence_parallel:
        # The norms' largest outputs: this rank's part of the sequence, whole hidden size.
        rows = args.batch * local_rows(args.seq, tp, args.rank % tp)
        for norm in ("input_layernorm|aten::mul", "post_attention_layernorm|aten::mul"):
            want[norm] = 4 * rows * cfg.hidden_size
            times[norm] = 2 * cfg.num_hidden_layers
    fails, seen = [], {}
    for a in allocs:
        if a["it"] != 2 or a["phase"] != "forward":
            continue
        where = a["ctx"].split(".", 3)[-1] if a["ctx"].startswith(PREFIX) else a["ctx"]
        for key, size in want.items():
            if where.startswith(key):
                seen[key] = seen.get(key, 0) + 1
                if a["bytes"] != size:
                    fails.append(f"{a['ctx']}: {a['bytes']} B, want {size} B (1/{tp} of "
                                 "the width)")
    for key, n in times.items():
        if seen.get(key, 0) != n:
            fails.append(f"{key} allocated {seen.get(key, 0)} times in step 2's forward, want "
                         f"{n}")
    return fails, heads, mlp


def expected_collectives(cfg, args):
    """Step 2's collective outputs, in order, forward and backward (see the top)."""
    tp, layers = args.world // args.dp, cfg.num_hidden_layers
    whole = 4 * args.batch * args.seq * cfg.hidden_size
    loss = [4 * args.batch * (args.seq - 1)] * 3 if args.loss_parallel else []
    if args.sequence_parallel:
        part = 4 * args.batch * local_rows(args.seq, tp, args.rank % tp) * cfg.hidden_size
        forward = [part] + [whole, part] * 2 * layers + [whole]
        return forward + loss, forward
    return ([whole] * 2 * layers + loss,
            [whole] * (5 * layers + (1 if args.loss_parallel else 0)))


def check_collectives(allocs, cfg, args):
    """Step 2: 2 all-reduces a layer in the forward (o_proj, down_proj), 5 in the backward
    (the inputs of q, k, v, gate and up), each one output of the hidden states' size; with
    --loss-parallel the loss's three of a value per token after the forward's, and the
    head's input gradient in the backward; with --sequence-parallel the all-gathers and
    reduce-scatters (the backward's in any order: as many of each as the forward's)."""
    forward, backward = expected_collectives(cfg, args)
    fails = []
    for phase, want in (("forward", forward), ("backward", backward)):
        got = [a["bytes"] for a in allocs if a["it"] == 2 and a["phase"] == phase
               and "_c10d_functional::" in a["ctx"]]
        if sorted(got) != sorted(want) or (phase == "forward" and got != want):
            fails.append(f"step 2's {phase}: collective outputs {got} B, want {want} B")
    return fails


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace")
    p.add_argument("estimate")
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--dp", type=int, default=1, help="FSDP2's ranks in a 2-D mesh")
    p.add_argument("--loss-parallel", action="store_true", help="fsdp.py's, with --tp")
    p.add_argument("--sequence-parallel", action="store_true", help="fsdp.py's, with both")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=128)
    args = p.parse_args()
    if args.sequence_parallel and not args.loss_parallel:
        p.error("--sequence-parallel is checked with --loss-parallel")
    # fsdp.py's defaults: its small decoder.
    cfg = config(argparse.Namespace(size="small", vocab=4096, hidden=256, layers=4,
                                    seq=args.seq, tp=args.world // args.dp))
    local, grads, full = expected_bytes(cfg, args)
    peaks = json.load(open(args.estimate))["category_peak_bytes"]
    # Each storage rounds up to 512 B in the allocator; a few small buffers beside.
    slack = 512 * 4 * (9 * cfg.num_hidden_layers + 3)
    fails = check_state(peaks, local, grads, full, slack)
    allocs = read_trace(args.trace)
    widths, heads, mlp = check_widths(allocs, cfg, args)
    fails += widths + check_collectives(allocs, cfg, args)
    print(f"world {args.world} (TP {args.world // args.dp} x FSDP2 {args.dp}), rank {args.rank}: params {full} B, this rank's {local} B; "
          f"weights {peaks.get('weights')} B, gradients {peaks.get('gradients')} B, optimizer "
          f"state {peaks.get('optimizer_state')} B; q/k/v outputs {heads} B, MLP {mlp} B")
    for fail in fails:
        print("FAIL:", fail)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
