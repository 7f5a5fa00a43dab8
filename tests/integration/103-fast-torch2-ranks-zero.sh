#!/usr/bin/env bash
# Issue 29: DeepSpeed ZeRO stages 1-3 in fast mode. zero.py trains a Llama-style decoder
# (4 layers, fp32 or bf16, torch's AdamW) through deepspeed.initialize; each rank runs DeepSpeed's
# own code against xmem's process group. zero_check.py computes from the parameter count P
# what ZeRO keeps on a GPU rank and compares the estimate's categories: AdamW's state 8P/N
# (every stage), the gradient partition 4P/N (stages 2-3), and the weights (stages 1-2: the
# whole flat model and the rank's fp32 master partition; stage 3: the parameter, master and
# gradient partitions and the reduce bucket), and finds the reduce bucket
# (reduce_bucket_size) in the trace. Without fast mode's rule that a factory naming the meta
# device makes no device storage, DeepSpeed's zeros_like(param, device="meta") shape copies
# counted as a whole model more (stage 2's weights); without ranks.py's answer to ZeRO-3's
# agreement check (rank 0's list, broadcast and read back), stage 3 exits at its first step.
# Stage 3's prefetch (stage3_prefetch_bucket_size) raises step 2's forward peak by the layers
# gathered ahead.
# Launched three ways: one rank with xmem-estimate's environment, DeepSpeed's launcher, and
# torch.distributed.run (the two rank roles each).
# DeepSpeed comes from tests/venv/deepspeed.lock, installed once into its own venv (the wheel
# cache makes later runs offline); the test skips only when that install fails.
source "$(dirname "$0")/90-fast-torch2-common.bash"
EST=$XMEM_BUILD/bin/xmem-estimate
DSVENV=${XMEM_DS_VENV:-$XMEM_SRC/.venv-deepspeed}
if ! DS_BUILD_OPS=0 XMEM_VENV_BASE=$VENV "$XMEM_SRC/tests/venv/install.sh" "$DSVENV" \
    "$XMEM_SRC/tests/venv/deepspeed.lock" >"$TMP/install" 2>&1; then
    echo "DeepSpeed cannot be installed into $DSVENV ($(tail -n 1 "$TMP/install"))"
    exit 77
fi
DPY=$DSVENV/bin/python
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
ZERO=$WORKLOADS/torch2/zero.py
CHECK=$WORKLOADS/torch2/zero_check.py
keep_going
set +e

# One rank (rank 1 of N) with the environment xmem-estimate gives it.
rank1() {
    local n=$1 stage=$2
    env XMEM_WORLD_SIZE=$n RANK=1 LOCAL_RANK=1 WORLD_SIZE=$n LOCAL_WORLD_SIZE=$n \
        MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \
        "$FAST" --python "$DPY" --out "$TMP/z$stage-$n.trace" --steps 3 -- python "$ZERO" \
        --stage "$stage" --steps 3 >"$TMP/out" 2>"$TMP/err"
    expect_true "ZeRO-$stage, rank 1 of $n: captured" [ -s "$TMP/z$stage-$n.trace" ]
    "$EST" --json --gpu H100-80GB --trace-in "$TMP/z$stage-$n.trace" >"$TMP/z$stage-$n.json" 2>/dev/null
    expect_true "ZeRO-$stage, rank 1 of $n: partitions and reduce bucket" \
        "$VPY" "$CHECK" "$TMP/z$stage-$n.json" "$TMP/z$stage-$n.trace" --stage "$stage" --world "$n"
}
for stage in 1 2 3; do rank1 4 "$stage"; done

# Stage 3's prefetch: with stage3_prefetch_bucket_size covering every layer, rank 1 of 2
# gathers the next layers' parameters ahead of step 2's forward, as DeepSpeed's coordinator
# decides; without prefetching it gathers each when its forward needs it.
for prefetch in 0 10000000; do
    env XMEM_WORLD_SIZE=2 RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 \
        MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \
        "$FAST" --python "$DPY" --out "$TMP/prefetch-$prefetch.trace" --steps 3 -- python "$ZERO" \
        --stage 3 --steps 3 --prefetch "$prefetch" >"$TMP/out" 2>"$TMP/err"
done
expect_true "ZeRO-3's prefetch holds the next layers' parameters in step 2's forward" \
    "$VPY" "$CHECK" --prefetch "$TMP/prefetch-10000000.trace" "$TMP/prefetch-0.trace"

# DeepSpeed's own launcher: xmem-estimate reads --num_gpus and gives each rank
# --local_rank=R, as the launcher does; bf16 weights, overlap_comm (two reduce buckets).
run_to "$TMP/s2.json" "$EST" --json --mode fast --gpu H100-80GB --steps 3 \
    --keep-trace "$TMP/s2.trace" -- "$DSVENV/bin/deepspeed" --num_gpus 2 "$ZERO" --stage 2 \
    --bf16 --overlap-comm --steps 3
expect_rc 0 "ZeRO-2 decoder under deepspeed --num_gpus 2"
expect_field "$TMP/s2.json" launcher deepspeed "the launcher named"
expect_json "$TMP/s2.json" "[r['rank'] for r in j['ranks']] == [0, 1]" "both ranks listed"
expect_true "rank 1 ran with --local_rank=1" grep -q -- "^M argv .* --local_rank=1$" "$TMP/s2.trace.rank1"
# What the launcher reads no count from, or chooses its GPUs by: one line naming the fix.
run "$EST" --json --mode fast -- "$DSVENV/bin/deepspeed" "$ZERO" --stage 2
expect_rc 2 "deepspeed without --num_gpus refused"
expect_out "give it, or xmem estimate --world-size N" "the fix named"
run "$EST" --json --mode fast -- "$DSVENV/bin/deepspeed" --include localhost:0,1 "$ZERO" --stage 2
expect_rc 2 "deepspeed --include refused"
expect_out "deepspeed --include: xmem does not read this option" "the option named"
for trace in s2.trace s2.trace.rank1; do
    "$EST" --json --gpu H100-80GB --trace-in "$TMP/$trace" >"$TMP/$trace.json" 2>/dev/null
    expect_true "ZeRO-2 bf16 overlap_comm, $trace of 2 ranks: partitions and reduce buckets" \
        "$VPY" "$CHECK" "$TMP/$trace.json" "$TMP/$trace" --stage 2 --world 2 --bf16 --overlap-comm
done

# Both rank roles through xmem-estimate and torchrun's line, run by DeepSpeed's venv.
run_to "$TMP/s3.json" "$EST" --json --mode fast --gpu H100-80GB --steps 3 \
    --keep-trace "$TMP/s3.trace" -- "$DPY" -m torch.distributed.run --nproc_per_node=2 \
    "$ZERO" --stage 3 --steps 3
expect_rc 0 "ZeRO-3 decoder under torch.distributed.run --nproc_per_node=2"
expect_field "$TMP/s3.json" world_size 2 "the world size read from the launcher"
expect_json "$TMP/s3.json" "[r['rank'] for r in j['ranks']] == [0, 1]" "both ranks listed"
for trace in s3.trace s3.trace.rank1; do
    "$EST" --json --gpu H100-80GB --trace-in "$TMP/$trace" >"$TMP/$trace.json" 2>/dev/null
    expect_true "ZeRO-3, $trace of 2 ranks: partitions and reduce bucket" \
        "$VPY" "$CHECK" "$TMP/$trace.json" "$TMP/$trace" --stage 3 --world 2
done
finish
