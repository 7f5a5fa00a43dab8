#!/usr/bin/env bash
# Issue 29: a Llama-style decoder (transformers' LlamaConfig, 4 layers) under FSDP2's
# fully_shard on 2, 4 and 8 ranks in fast mode. Each rank holds its padded dim-0 shard of
# every parameter, of its gradient and twice that of AdamW's state (ranks_check.py computes
# the shards from the parameter shapes), and each decoder layer's all-gather output (its
# parameters, whole) is allocated in every forward and again in the backward
# (reshard_after_forward), as FSDP2 allocates them on a GPU. Live bytes from both sides:
# when a backward ends, the shards of parameters, gradients and AdamW's state alone (FSDP2
# freed each unsharded parameter by resizing its storage to 0: without fast mode's rule for
# a storage's resize_, the whole unsharded model stayed live), and at most the root's and
# one layer's gathered parameters, each as the all-gather output and as the parameters
# resized back and copied out of it. 4 ranks go through
# xmem-estimate and torchrun's line (both rank roles profiled); 2 and 8 profile rank 1 alone
# with the environment xmem-estimate gives it, to keep the test short. Rank 1 of 2 is also
# compared with PyTorch's FSDPMemTracker on the same job.
source "$(dirname "$0")/101-fast-torch2-ranks-common.bash"
keep_going
set +e

run_to "$TMP/4.json" "$EST" --json --mode fast --gpu H100-80GB --steps 3 \
    --keep-trace "$TMP/4.trace" -- torchrun --nproc_per_node=4 "$FSDP" --steps 3
expect_rc 0 "FSDP2 decoder under torchrun --nproc_per_node=4"
expect_field "$TMP/4.json" world_size 4 "the world size read from torchrun"
expect_json "$TMP/4.json" "[(r['rank'], r['profiled_as']) for r in j['ranks']] == [(0, 0), (1, 1), (2, 1), (3, 1)]" \
    "every rank listed, ranks 1-3 sharing rank 1's profile"
"$EST" --json --gpu H100-80GB --trace-in "$TMP/4.trace.rank1" >"$TMP/4.rank1.json" 2>/dev/null
expect_true "4 ranks: shards and all-gather buffers (rank 1)" \
    "$VPY" "$CHECK" fsdp "$TMP/4.trace.rank1" "$TMP/4.rank1.json" --world 4
expect_true "4 ranks: shards and all-gather buffers (rank 0)" \
    "$VPY" "$CHECK" fsdp "$TMP/4.trace" "$TMP/4.json" --world 4

for n in 2 8; do
    fsdp_rank1 "$n" "$n"
    expect_true "FSDP2 decoder, rank 1 of $n: captured" [ -s "$TMP/$n.trace" ]
    expect_true "$n ranks: shards and all-gather buffers" \
        "$VPY" "$CHECK" fsdp "$TMP/$n.trace" "$TMP/$n.json" --world "$n"
done
# PyTorch's own FSDPMemTracker on the same job, rank 1 of 2 (make bench-multigpu's script,
# fake tensors and torch's fake process group): its peak, less AdamW's host step counters,
# is xmem's most live device bytes within 512 B.
"$VPY" "$XMEM_SRC/bench/multigpu/fsdp_mem_tracker.py" --world 2 --rank 1 --steps 3 \
    >"$TMP/tracker.json" 2>"$TMP/tracker.err"
expect_true "FSDPMemTracker ran on the decoder ($(grep -m1 Error "$TMP/tracker.err"))" [ -s "$TMP/tracker.json" ]
expect_true "2 ranks: xmem's most live bytes are FSDPMemTracker's peak" \
    "$VPY" "$CHECK" tracker "$TMP/2.trace" "$TMP/tracker.json"
expect_true "more ranks, smaller shards: 8 ranks' weights below 2 ranks'" \
    "$VPY" -c 'import json,sys; a,b=(json.load(open(p))["category_peak_bytes"]["weights"] for p in sys.argv[1:]); sys.exit(not b < a / 3)' \
    "$TMP/2.json" "$TMP/8.json"

# FSDP1 (FullyShardedDataParallel, one flat parameter per decoder layer): it would
# materialise a module whose parameters are fast mode's device (meta) tensors, and fail in
# reset_parameters, without ranks.py's answer that a GPU rank holds them already. Each rank
# keeps 1/N of the weights, gradients and AdamW's state (flat parameters padded to N).
for n in 1 2 4; do
    run_to "$TMP/fsdp1-$n.json" "$EST" --json --mode fast --gpu H100-80GB --steps 3 \
        -- torchrun --nproc_per_node=$n "$FSDP" --fsdp1 --steps 3
    expect_rc 0 "FSDP1 decoder under torchrun --nproc_per_node=$n"
done
expect_true "FSDP1: weights, gradients and AdamW's state sharded 1/N" "$VPY" - "$TMP" <<'PY'
import json, sys
peaks = {n: json.load(open(f"{sys.argv[1]}/fsdp1-{n}.json"))["category_peak_bytes"] for n in (1, 2, 4)}
bad = []
for n in (2, 4):
    for key in ("weights", "gradients", "optimizer_state"):
        want = peaks[1][key] / n
        if abs(peaks[n][key] - want) > 0.01 * want + 8192:
            bad.append(f"{n} ranks: {key} {peaks[n][key]} B, want about {want:.0f} (1/{n})")
    if abs(peaks[n]["optimizer_state"] - 2 * peaks[n]["weights"]) > 0.01 * peaks[n]["weights"]:
        bad.append(f"{n} ranks: AdamW state {peaks[n]['optimizer_state']} B, weights {peaks[n]['weights']} B")
print("\n".join(bad) or {n: {k: p[k] for k in ("weights", "gradients", "optimizer_state")} for n, p in peaks.items()})
sys.exit(1 if bad else 0)
PY
finish
