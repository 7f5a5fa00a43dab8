#!/usr/bin/env bash
# Issue 29: a Llama-style decoder (fsdp.py's, 4 layers) under tensor parallelism
# (torch.distributed.tensor's parallelize_module: q/k/v, gate and up ColwiseParallel, o_proj
# and down_proj RowwiseParallel) on 2 and 4 ranks in fast mode. Each rank holds its share of
# the sharded Linear layers' weights, gradients and AdamW's state (and the embeddings, norms
# and head whole), the column-parallel activations are 1/N as wide, and each TP all-reduce
# allocates one output, as its CUDA kernel does (without fast mode's kernels for wait_tensor
# and _wrap_tensor_autograd, every all-reduce's output was allocated twice). tp_check.py
# computes all of it from the parameter shapes. 2 ranks go through --world-size, 4 through
# torchrun's line (both rank roles profiled each time); the 2-D mesh (TP 2 x FSDP2 2 on 4
# ranks), loss_parallel (the head column-parallel too, its logits never gathered, 4 ranks)
# and SequenceParallel with it (norms and residual stream split by the sequence, 4 ranks)
# profile rank 1 alone, to keep the test short. collectives.py calls each c10d and
# functional collective once a step and checks their outputs' allocations.
source "$(dirname "$0")/90-fast-torch2-common.bash"
EST=$XMEM_BUILD/bin/xmem-estimate
export PATH=$VENV/bin:$PATH HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
TP=$WORKLOADS/torch2/fsdp.py
CHECK=$WORKLOADS/torch2/tp_check.py
keep_going
set +e

# Both rank roles of N ranks: rank 0's estimate is xmem-estimate's, rank 1's from its trace.
check_ranks() {
    local n=$1
    "$EST" --json --gpu H100-80GB --trace-in "$TMP/$n.trace.rank1" >"$TMP/$n.rank1.json" 2>/dev/null
    expect_true "$n ranks: TP shards, widths and all-reduce outputs (rank 0)" \
        "$VPY" "$CHECK" "$TMP/$n.trace" "$TMP/$n.json" --world "$n" --rank 0
    expect_true "$n ranks: TP shards, widths and all-reduce outputs (rank 1)" \
        "$VPY" "$CHECK" "$TMP/$n.trace.rank1" "$TMP/$n.rank1.json" --world "$n" --rank 1
}

run_to "$TMP/2.json" "$EST" --json --mode fast --gpu H100-80GB --steps 3 --world-size 2 \
    --keep-trace "$TMP/2.trace" -- python "$TP" --tp 2 --steps 3
expect_rc 0 "TP decoder at --world-size 2"
check_ranks 2

run_to "$TMP/4.json" "$EST" --json --mode fast --gpu H100-80GB --steps 3 \
    --keep-trace "$TMP/4.trace" -- torchrun --nproc_per_node=4 "$TP" --tp 4 --steps 3
expect_rc 0 "TP decoder under torchrun --nproc_per_node=4"
expect_field "$TMP/4.json" world_size 4 "the world size read from torchrun"
expect_json "$TMP/4.json" "[(r['rank'], r['profiled_as']) for r in j['ranks']] == [(0, 0), (1, 1), (2, 1), (3, 1)]" \
    "every rank listed, ranks 1-3 sharing rank 1's profile"
check_ranks 4
expect_true "a rank's 2-rank trace fails the 4-rank check (the check can fail)" \
    bash -c '! "$0" "$1" "$2" "$3" --world 4 --rank 1 >/dev/null' \
    "$VPY" "$CHECK" "$TMP/2.trace.rank1" "$TMP/2.rank1.json"
expect_true "more ranks, smaller shards: 4 ranks' weights below 2 ranks'" \
    "$VPY" -c 'import json,sys; a,b=(json.load(open(p))["category_peak_bytes"]["weights"] for p in sys.argv[1:]); sys.exit(not b < a)' \
    "$TMP/2.json" "$TMP/4.json"

# Rank 1 of 4 alone, with the environment xmem-estimate gives it: TRACE SCRIPT ARGS...
profile_rank1() {
    local trace=$1
    shift
    env XMEM_WORLD_SIZE=4 RANK=1 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=4 \
        MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \
        "$FAST" --python "$VPY" --out "$trace" --steps 3 -- python "$@" --steps 3 \
        >"$TMP/out" 2>"$TMP/err"
}

# 2-D: a (2, 2) mesh, TP over its second dimension and FSDP2 over its first.
profile_rank1 "$TMP/2d.trace" "$TP" --tp 2
expect_true "TP 2 x FSDP2 2, rank 1 of 4: captured" [ -s "$TMP/2d.trace" ]
"$EST" --json --gpu H100-80GB --trace-in "$TMP/2d.trace" >"$TMP/2d.json" 2>/dev/null
expect_true "TP 2 x FSDP2 2: FSDP2's shards of the TP shards, widths and all-reduce outputs" \
    "$VPY" "$CHECK" "$TMP/2d.trace" "$TMP/2d.json" --world 4 --rank 1 --dp 2
profile_rank1 "$TMP/lp.trace" "$TP" --tp 4 --loss-parallel
"$EST" --json --gpu H100-80GB --trace-in "$TMP/lp.trace" >"$TMP/lp.json" 2>/dev/null
expect_true "loss_parallel: the head's shard and 1/4 of the logits, the loss's all-reduces" \
    "$VPY" "$CHECK" "$TMP/lp.trace" "$TMP/lp.json" --world 4 --rank 1 --loss-parallel

profile_rank1 "$TMP/sp.trace" "$TP" --tp 4 --loss-parallel --sequence-parallel
"$EST" --json --gpu H100-80GB --trace-in "$TMP/sp.trace" >"$TMP/sp.json" 2>/dev/null
expect_true "SequenceParallel: 1/4 of the sequence between blocks, all-gathers and reduce-scatters" \
    "$VPY" "$CHECK" "$TMP/sp.trace" "$TMP/sp.json" --world 4 --rank 1 --loss-parallel \
    --sequence-parallel

profile_rank1 "$TMP/coll.trace" "$WORKLOADS/torch2/collectives.py"
expect_true "collectives, rank 1 of 4: each output allocated as on a GPU, waits allocate nothing" \
    "$VPY" "$WORKLOADS/torch2/collectives.py" --check "$TMP/coll.trace" --world 4
finish
