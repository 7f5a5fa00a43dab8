#!/usr/bin/env python3
"""Checks one rank's fast-mode trace of ddp.py or fsdp.py against what torch does on a GPU
rank, computed here from the model's parameter shapes alone (tests/integration/100-*).

    ranks_check.py ddp TRACE --model resnet50 [--bucket-cap-mb MB] [--view] [--classes N]
    ranks_check.py fsdp TRACE ESTIMATE.json --world N [--layers L] [--hidden H] [--vocab V]
                   [--mp bf16] [--offload]
    ranks_check.py fsdp1 DIR --world N [--layers L] [--hidden H] [--vocab V]
    ranks_check.py tracker TRACE TRACKER.json [--layers L] [--hidden H] [--vocab V]

ddp: DistributedDataParallel's gradient buckets. Step 1 reduces every gradient in one bucket
(the parameters' order is not known before a backward has run); when step 2 begins the
Reducer rebuilds them in the order the gradients became ready (the reverse of the
parameters' order for these nets), each closed once it holds at least bucket_cap_mb; with
DDP's default cap (25 MiB), the first closes at 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES). Each bucket
is one device allocation of its gradients' bytes, and the step-1 bucket is freed then. With
--view (gradient_as_bucket_view) the gradients are views into the buckets: a backward after
the first allocates no gradient of its own.

fsdp: FSDP2 keeps each parameter's dim-0 shard, padded to a multiple of N rows: the
estimate's weights and gradients are the padded shards' bytes, AdamW's state twice that;
each decoder layer's all-gather output (its padded parameters times N) is allocated once in
every forward and, with reshard_after_forward, again in the backward. Live bytes, from both
sides: when a backward ends, the shards of the parameters, their gradients and AdamW's
state, and nothing gathered (FSDP2 freed every unsharded parameter by resizing its storage
to 0 bytes); at most, in a step, two groups' gathered parameters, each twice: the root's
(embeddings, norm, head) and one layer's, each as the flat all-gather output, kept until the
next all-gather waits, and as the parameters copied out of it, which FSDP2 makes by resizing
their storages back.

tracker: PyTorch's own FSDPMemTracker on the same job (bench/multigpu/fsdp_mem_tracker.py's
JSON, fake CPU tensors and torch's fake process group) against the trace's most live device
bytes from the first step on. Its peak also counts AdamW's step counters, a 0-d fp32 per
parameter tensor that stays on the host on a GPU (neither capturable nor fused), which its
all-CPU fake device cannot tell apart; less those, the two agree within 512 B.
"""
import argparse
import json
import math
import sys

MIB = 1 << 20
REBUILD = "DistributedDataParallel|DistributedDataParallel.forward>aten::empty"


def events(path):
    """The trace's device allocations and their frees, in order: ("A", id, bytes,
    iteration, phase, context) and ("F", id, None, iteration, phase, None)."""
    text, device, it, phase = {}, set(), 0, "setup"
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == "S":
            text[f[1]] = line.split(" ", 2)[2].strip() if len(f) > 2 else ""
        elif f[0] == "I":
            it = int(f[1])
        elif f[0] == "P":
            phase = f[1]
        elif f[0] == "A" and f[3] == "g":
            device.add(f[1])
            yield "A", f[1], int(f[2]), it, phase, text.get(f[5], "")
        elif f[0] == "F" and f[1] in device:
            device.discard(f[1])
            yield "F", f[1], None, it, phase, None


def read_trace(path):
    """Device allocations: iteration, phase, bytes, context, and the iteration that freed
    each (None: alive at the end)."""
    allocs, live = [], {}
    for kind, sid, size, it, phase, ctx in events(path):
        if kind == "A":
            live[sid] = {"it": it, "phase": phase, "bytes": size, "freed": None, "ctx": ctx}
            allocs.append(live[sid])
        else:
            live.pop(sid)["freed"] = it
    return allocs


def fsdp_live(path):
    """Per step: live device bytes when its backward ends, the most bytes held at once by
    the storages FSDP2's unshard made (its all-gather outputs and the parameters resized
    back: contexts FSDP::pre_forward / FSDP::pre_backward), and the most live bytes in its
    optimizer phase."""
    live, last = {}, (0, "setup")
    now = gathered = 0
    ends, most, optimizer = {}, {}, {}
    for kind, sid, size, it, phase, ctx in events(path):
        if last[1] == "backward" and phase != "backward":
            ends[last[0]] = now  # the first event after the backward: its live bytes
        last = (it, phase)
        if kind == "F":
            size, unshard = live.pop(sid)
            now -= size
            gathered -= size if unshard else 0
            continue
        unshard = "FSDP::pre_" in ctx
        live[sid] = (size, unshard)
        now += size
        if phase == "optimizer":
            optimizer[it] = max(optimizer.get(it, 0), now)
        if unshard:
            gathered += size
            most[it] = max(most.get(it, 0), gathered)
    return ends, most, optimizer


def ddp_buckets(sizes, cap_bytes, first_bytes):
    """Bucket bytes, greedy over SIZES (gradient-ready order): the first closes at
    FIRST_BYTES, the others at CAP_BYTES."""
    buckets, current, limit = [], 0, first_bytes
    for size in sizes:
        current += size
        if current >= limit:
            buckets.append(current)
            current, limit = 0, cap_bytes
    if current:
        buckets.append(current)
    return buckets


def check_ddp(args):
    import torch
    import torchvision
    with torch.device("meta"):
        model = getattr(torchvision.models, args.model)(num_classes=args.classes)
    sizes = [p.numel() * p.element_size() for p in model.parameters()]
    # DDP's default cap is 25 MiB, with a first bucket of 1 MiB; a cap the job gives is
    # every bucket's, the first's too.
    cap = int((args.bucket_cap_mb or 25) * MIB)
    want = ddp_buckets(list(reversed(sizes)), cap, MIB if args.bucket_cap_mb is None else cap)
    allocs = read_trace(args.trace)
    fails = []
    first = [a for a in allocs if a["it"] == 0 and a["bytes"] == sum(sizes)]
    if not any(a["freed"] == 2 for a in first):
        fails.append(f"no step-1 bucket of all {sum(sizes)} B made in set-up and freed at step 2")
    # The rebuild runs when step 2's forward begins, in DDP's own forward; beside the
    # buckets it broadcasts the new order (a few int32 tensors, each far below a bucket).
    rebuilt = [a["bytes"] for a in allocs if a["it"] == 2 and a["ctx"] == REBUILD]
    small = [b for b in rebuilt if b not in want]
    if sorted(b for b in rebuilt if b in want) != sorted(want) or any(b >= 4096 for b in small):
        fails.append(f"rebuilt buckets {rebuilt}, want {want} (and order tensors < 4 KiB)")
    grads = sum(a["bytes"] for a in allocs if a["it"] == 3 and a["phase"] == "backward"
                and a["bytes"] in set(sizes) and a["freed"] is None)
    if args.view and grads:
        fails.append(f"gradient_as_bucket_view: step 3's backward kept {grads} B of gradients")
    if not args.view and grads < sum(sizes):
        fails.append(f"step 3's backward kept {grads} B of gradients, less than {sum(sizes)} B")
    print(f"{len(want)} buckets at bucket_cap_mb={args.bucket_cap_mb}: {want}; trace: "
          f"{rebuilt}; step-3 gradients outside the buckets {grads} B")
    return fails


def padded(shape, world):
    rows = math.ceil(shape[0] / world) if shape else 1
    return rows * math.prod(shape[1:])


def decoder_arguments(parser):
    """--layers, --hidden and --vocab, as given to fsdp.py or zero.py (their defaults)."""
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--vocab", type=int, default=4096)


def meta_decoder(args):
    """fsdp.py's and zero.py's decoder, on the meta device: its parameter shapes."""
    import torch
    from transformers import LlamaForCausalLM
    from workload_args import decoder_config
    with torch.device("meta"):
        return LlamaForCausalLM(decoder_config(args.vocab, args.hidden, args.layers, 128))



def forward_end(path, step=2):
    """Live device bytes when step STEP's forward ends."""
    now, live, last = 0, {}, None
    for kind, sid, size, it, phase, _ in events(path):
        if last == (step, "forward") and phase != "forward":
            return now
        last = (it, phase)
        if kind == "A":
            live[sid] = size
            now += size
        else:
            now -= live.pop(sid)
    return now


def check_fsdp1(args):
    """FSDP1's strategies at N ranks, from the runs DIR/{full,grad-op,none,mp}.{trace,json}:
    FULL_SHARD and SHARD_GRAD_OP keep 1/N of each unit's flat parameter (padded to N), its
    gradient and twice that of AdamW's state; NO_SHARD keeps the whole model, as DDP does;
    MixedPrecision(bf16, fp32 reduce) keeps FULL_SHARD's fp32 shards and gathers in bf16.
    SHARD_GRAD_OP does not free a layer's unsharded flat parameter after its forward: when
    the forward ends it holds every decoder layer's, which FULL_SHARD freed."""
    model, n = meta_decoder(args), args.world
    units = [list(layer.parameters()) for layer in model.model.layers]
    in_layers = {id(p) for unit in units for p in unit}
    units.append([p for p in model.parameters() if id(p) not in in_layers])
    shard = sum(math.ceil(sum(p.numel() for p in unit) / n) * 4 for unit in units)
    full = sum(p.numel() * 4 for p in model.parameters())
    layers = sum(p.numel() * 4 for unit in units[:-1] for p in unit)
    slack = 512 * 2 * len(units) + 8192  # per-storage rounding; buffers (rotary inv_freq)
    fails = []
    for run, want in (("full", shard), ("grad-op", shard), ("none", full), ("mp", shard)):
        peaks = json.load(open(f"{args.dir}/{run}.json"))["category_peak_bytes"]
        for name, bytes_ in (("weights", want), ("gradients", want), ("optimizer_state", 2 * want)):
            if not bytes_ <= peaks.get(name, 0) <= bytes_ + slack:
                fails.append(f"{run}: {name} {peaks.get(name)} B, want {bytes_} B")
        print(f"{run}: weights {peaks.get('weights')} B, gradients {peaks.get('gradients')} B, "
              f"optimizer state {peaks.get('optimizer_state')} B (shards {shard} B, model {full} B)")
    # Each unit's flat parameter is gathered once in step 2's forward, by resizing its
    # storage back: all of them fp32 under FULL_SHARD, bf16 (half) under MixedPrecision,
    # which first resizes back its bf16 copy of the local shard (1/N of that) to gather from.
    padded_all = sum(math.ceil(sum(p.numel() for p in unit) / n) * n * 4 for unit in units)
    for run, want in (("full", padded_all), ("mp", padded_all // 2 + padded_all // 2 // n)):
        got = sum(a["bytes"] for a in read_trace(f"{args.dir}/{run}.trace") if a["it"] == 2
                  and a["phase"] == "forward" and a["ctx"].endswith("UntypedStorage.resize_"))
        print(f"{run}: step 2's forward gathered {got} B of flat parameters, want {want} B")
        if not want <= got <= want + slack:
            fails.append(f"{run}: step 2's forward gathered {got} B of flat parameters, want "
                         f"{want} B")
    kept = forward_end(f"{args.dir}/grad-op.trace") - forward_end(f"{args.dir}/full.trace")
    print(f"grad-op keeps {kept} B more than full when step 2's forward ends; layers {layers} B")
    if not layers - slack <= kept <= layers + slack:
        fails.append(f"SHARD_GRAD_OP held {kept} B more than FULL_SHARD when the forward ended, "
                     f"want every decoder layer's unsharded parameters, {layers} B")
    return fails


def check_fsdp(args):
    model = meta_decoder(args)
    n = args.world
    shard = sum(padded(p.shape, n) * p.element_size() for p in model.parameters())
    full = sum(p.numel() * p.element_size() for p in model.parameters())
    # With --mp bf16 the all-gather runs in bf16: the gathered parameters are half the fp32
    # ones, while the shards (and so weights, gradients and AdamW's state) stay fp32.
    gathered_size = 2 if args.mp else None
    layer = sum(padded(p.shape, n) * n * (gathered_size or p.element_size())
                for p in model.model.layers[0].parameters())
    layer_fp32 = sum(padded(p.shape, n) * n * p.element_size()
                     for p in model.model.layers[0].parameters())
    in_layers = {id(p) for p in model.model.layers.parameters()}
    root = sum(padded(p.shape, n) * n * (gathered_size or p.element_size())
               for p in model.parameters() if id(p) not in in_layers)
    est = json.load(open(args.estimate))
    peaks = est["category_peak_bytes"]
    fails = []
    # Allocated sizes: each storage rounds up to 512 B in the allocator; the requested bytes
    # of the trace are what the categories count, so the shards' bytes must match up to
    # that rounding per storage (the non-parameter buffers, the batch and the loss too).
    slack = 512 * 2 * sum(1 for _ in model.parameters())
    # With --offload the shards, their gradients and AdamW's state are host memory: none of
    # it is on the GPU, where each all-gather first copies the shards in (checked below).
    resident = 0 if args.offload else shard
    for name, want in (("weights", resident), ("gradients", resident),
                       ("optimizer_state", 2 * resident)):
        got = peaks.get(name, 0)
        if not want <= got <= want + slack:
            fails.append(f"{name}: {got} B on the GPU, want {want} B (padded shards {shard} B;"
                         f" params {full} B / {n} = {full // n} B)")
    ends, most, optimizer = fsdp_live(args.trace)
    # AdamW (foreach) at its most: the shards of the parameters, their gradients, its two
    # states and one shard-sized temporary (_foreach_sqrt). DTensor works out each op's
    # output placement on fake tensors of the unsharded shape, which hold no memory on a
    # GPU: fast mode once counted three unsharded models at step 1.
    for step in (1, 2, 3):
        got = optimizer.get(step, 0)
        if not 5 * resident <= got <= 5 * resident + slack:
            fails.append(f"step {step}'s optimizer held at most {got} B, want the shards of "
                         f"parameters, gradients, AdamW's state and one temporary, {5 * shard} B")
    for step in (2, 3):
        got = ends.get(step, 0)
        if not 4 * resident <= got <= 4 * resident + slack:
            fails.append(f"step {step}'s backward ended with {got} B live, want the shards of "
                         f"parameters, gradients and AdamW's state, {4 * resident} B")
        got = most.get(step, 0)
        if not 2 * (root + layer) <= got <= 2 * (root + layer) + slack:
            fails.append(f"step {step} held at most {got} B of gathered parameters, want the "
                         f"root's {root} B and one layer's {layer} B, each twice (the all-"
                         f"gather output and the parameters copied out of it)")
    allocs = read_trace(args.trace)
    forward = sum(1 for a in allocs if a["it"] == 2 and a["phase"] == "forward"
                  and a["bytes"] == layer)
    backward = sum(1 for a in allocs if a["it"] == 2 and a["phase"] == "backward"
                   and a["bytes"] == layer)
    if forward < args.layers:
        fails.append(f"step 2's forward all-gathered a {layer} B layer {forward} times, "
                     f"want {args.layers}")
    if backward < args.layers - 1:
        fails.append(f"step 2's backward all-gathered a {layer} B layer {backward} times, want "
                     f"at least {args.layers - 1} (reshard_after_forward)")
    copied = sum(a["bytes"] for a in allocs if a["it"] == 2 and a["phase"] == "forward"
                 and "FSDP::pre_forward" in a["ctx"] and a["ctx"].endswith("aten::_to_copy"))
    if args.offload and not shard <= copied <= shard + slack:
        fails.append(f"step 2's forward copied {copied} B of shards from the host, want every "
                     f"shard once, {shard} B")
    # Each layer's gradients are reduce-scattered from one flat input of the reduce dtype:
    # fp32 (reduce_dtype) with --mp bf16 too, where autograd's gradients are bf16.
    reduced = sum(1 for a in allocs if a["it"] == 2 and a["phase"] == "backward"
                  and "post_backward_reduce" in a["ctx"] and a["bytes"] == layer_fp32)
    if reduced < args.layers:
        fails.append(f"step 2's backward reduce-scattered {reduced} layers from a "
                     f"{layer_fp32} B fp32 input, want {args.layers}")
    print(f"world {n}: params {full} B; shards {shard} B; weights {peaks.get('weights')} B, "
          f"gradients {peaks.get('gradients')} B, optimizer state {peaks.get('optimizer_state')}"
          f" B; layer all-gather {layer} B x {forward} forward, x {backward} backward; live "
          f"when step 2's backward ends {ends.get(2)} B; gathered at most {most.get(2)} B; copied from the host {copied} B")
    return fails


def live_peak(path, counted):
    """The most live device bytes after an allocation made where COUNTED(iteration, phase)."""
    now, live, most = 0, {}, 0
    for kind, sid, size, it, phase, _ in events(path):
        if kind == "A":
            live[sid] = size
            now += size
            if counted(it, phase):
                most = max(most, now)
        else:
            now -= live.pop(sid)
    return most


def steps_peak(path):
    """The most live device bytes from the first step on (the set-up before it is outside
    what FSDPMemTracker watches)."""
    return live_peak(path, lambda it, phase: it > 0)


def check_tracker(args):
    counters = 4 * sum(1 for _ in meta_decoder(args).parameters())
    theirs = json.load(open(args.tracker))["peak_bytes"] - counters
    ours = steps_peak(args.trace)
    print(f"most live bytes: xmem {ours}, FSDPMemTracker {theirs} without AdamW's {counters} B "
          "of host step counters")
    if abs(ours - theirs) > 512:
        return [f"xmem's most live bytes {ours} and FSDPMemTracker's {theirs} differ by "
                f"{ours - theirs} B"]
    return []


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    d = sub.add_parser("ddp")
    d.add_argument("trace")
    d.add_argument("--model", default="resnet50")
    d.add_argument("--classes", type=int, default=1000)
    d.add_argument("--bucket-cap-mb", type=float, default=None, help="as given to ddp.py")
    d.add_argument("--view", action="store_true")
    f = sub.add_parser("fsdp")
    f.add_argument("trace")
    f.add_argument("estimate")
    f.add_argument("--world", type=int, required=True)
    f.add_argument("--mp", choices=["bf16"], help="as given to fsdp.py")
    f.add_argument("--offload", action="store_true", help="as given to fsdp.py")
    f1 = sub.add_parser("fsdp1")
    f1.add_argument("dir", help="holds full, grad-op, none and mp, .trace and .json")
    f1.add_argument("--world", type=int, required=True)
    t = sub.add_parser("tracker")
    t.add_argument("trace")
    t.add_argument("tracker")
    for sp in (f, f1, t):
        decoder_arguments(sp)
    args = p.parse_args()
    fails = {"ddp": check_ddp, "fsdp": check_fsdp, "fsdp1": check_fsdp1,
             "tracker": check_tracker}[args.what](args)
    for fail in fails:
        print("FAIL:", fail)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
