#!/usr/bin/env python3
"""Checks one rank's fast-mode estimates of zero.py (DeepSpeed ZeRO) against what ZeRO keeps
on a GPU rank, computed here from the decoder's parameter count P alone
(tests/integration/103-*).

    zero_check.py ESTIMATE.json TRACE --stage S --world N [--bf16] [--overlap-comm]
                  [--bucket B] [--layers L] [--hidden H] [--vocab V]
    zero_check.py --prefetch TRACE_PREFETCH TRACE_NONE [--layers L] [--hidden H] [--vocab V]

torch's AdamW; the model's parameters in fp32, or bf16 with --bf16 (w bytes each: 4 or 2).
Each rank's flat partition holds P/N elements (up to ZeRO's alignment padding). What the
estimate's categories must hold, in bytes:

* optimizer state, every stage: AdamW's two states of the rank's fp32 partition, 8P/N;
* gradients, stages 2-3: the rank's fp32 gradient partition, 4P/N;
* weights, stages 1-2: the model's flat parameters, whole (wP: every rank holds them), and
  the rank's fp32 master partition (4P/N); stage 3: the rank's parameter partition (wP/N),
  its master partition (4P/N), its gradient partition buffer (wP/N), which stage 3 makes
  before the first step, and its reduce bucket (wB, reduce_bucket_size B elements), made
  then too.

--prefetch compares two stage-3 traces of rank 1, one with stage3_prefetch_bucket_size large
enough for every layer and one with 0: DeepSpeed's coordinator gathers the next layers'
parameters ahead of the forward that needs them, so step 2's forward holds more at its peak
with prefetching, by at least one decoder layer's fp32 parameters and by no more than the
whole model's.

The trace must hold the reduce bucket itself: stages 1-2 allocate it in each backward (the
bucket their gradients are copied into for the reduction; two with overlap_comm, one filling
while the other is reduced), stage 3 once before the first step, each of exactly wB bytes.
"""
import argparse
import json
import sys

from ranks_check import decoder_arguments, live_peak, meta_decoder, read_trace

FP32 = 4


def wanted(stage, n, params, bucket, width):
    """The categories' bytes at STAGE on N ranks, parameters of WIDTH bytes (the docstring's
    list)."""
    master = FP32 * params / n
    want = {"optimizer_state": 2 * master}
    if stage >= 2:
        want["gradients"] = master
    if stage < 3:
        want["weights"] = width * params + master
    else:
        want["weights"] = 2 * width * params / n + master + width * bucket
    return want


def buckets_made(allocs, stage, nbytes):
    """How many reduce buckets (NBYTES each) the trace allocates where STAGE does: in step 2's
    backward (stages 1-2), or before the first step (stage 3)."""
    phase, step = ("backward", 2) if stage < 3 else ("setup", 0)
    return sum(1 for a in allocs if a["bytes"] == nbytes and (a["phase"], a["it"]) == (phase, step))


def forward_peak(path, step=2):
    """The most live device bytes during step STEP's forward."""
    return live_peak(path, lambda it, phase: (it, phase) == (step, "forward"))


def check_prefetch(argv):
    """--prefetch TRACE_PREFETCH TRACE_NONE: the docstring's comparison."""
    p = argparse.ArgumentParser()
    p.add_argument("--prefetch", nargs=2, metavar=("TRACE_PREFETCH", "TRACE_NONE"))
    decoder_arguments(p)
    args = p.parse_args(argv)
    model = meta_decoder(args)
    layer = FP32 * sum(t.numel() for t in model.model.layers[0].parameters())
    whole = FP32 * sum(t.numel() for t in model.parameters())
    more = forward_peak(args.prefetch[0]) - forward_peak(args.prefetch[1])
    print(f"step 2's forward peak: {more} B more with prefetching (a layer {layer} B, the model "
          f"{whole} B)")
    if not layer <= more <= whole:
        print("FAIL: prefetching should hold at least one layer's gathered parameters more, "
              "and no more than the whole model's")
        sys.exit(1)


def main():
    if "--prefetch" in sys.argv:
        return check_prefetch(sys.argv[1:])
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("estimate")
    p.add_argument("trace")
    p.add_argument("--stage", type=int, choices=[1, 2, 3], required=True)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--bf16", action="store_true", help="as given to zero.py")
    p.add_argument("--overlap-comm", action="store_true", help="as given to zero.py")
    p.add_argument("--bucket", type=int, default=200_000, help="as given to zero.py")
    decoder_arguments(p)
    args = p.parse_args()
    model = meta_decoder(args)
    params = sum(t.numel() for t in model.parameters())
    peaks = json.load(open(args.estimate))["category_peak_bytes"]
    # ZeRO pads its flat groups to a multiple of 2N elements, and the allocator's 512 B
    # rounding applies per storage (the batch, the loss): a few KiB in all.
    slack = 0.001
    fails = []
    width = 2 if args.bf16 else FP32
    for name, want in wanted(args.stage, args.world, params, args.bucket, width).items():
        got = peaks.get(name, 0)
        if abs(got - want) > slack * want + 65536:
            fails.append(f"{name}: {got} B, want {want:.0f} B (P = {params} parameters, "
                         f"stage {args.stage}, {args.world} ranks)")
    want = 2 if args.overlap_comm and args.stage < 3 else 1
    got = buckets_made(read_trace(args.trace), args.stage, width * args.bucket)
    if got != want:
        where = "step 2's backward" if args.stage < 3 else "set-up"
        fails.append(f"{got} reduce buckets of {width * args.bucket} B (reduce_bucket_size "
                     f"{args.bucket}) in {where}, want {want}")
    print(f"stage {args.stage}, {args.world} ranks, {'bf16' if args.bf16 else 'fp32'}, P = {params}: " +
          ", ".join(f"{k} {peaks.get(k, 0)} B" for k in ("weights", "gradients", "optimizer_state")))
    for fail in fails:
        print("FAIL:", fail)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
