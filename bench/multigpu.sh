#!/usr/bin/env bash
# Issue 29's targets as benchmark figures (not timed tests), on torch 2.x from the project
# venv first on PATH. The job: tests/workloads/torch2/fsdp.py, a Llama-2-7B-shaped decoder
# built from its config (HF_HUB_OFFLINE=1), FSDP2's fully_shard on each decoder layer and
# the root, built on the meta device and given its shards' storage by to_empty, AdamW,
# batch 1 x 2048, fp32; estimated in fast mode for an H100-80GB:
#   8 ranks (torchrun --nproc-per-node 8), xmem estimate end to end   <= 60 s, <= 4 GiB RSS
#   8 ranks against 1 rank (torchrun --nproc-per-node 1), time ratio  <= 2
#   per rank, xmem's figures beside PyTorch's FSDPMemTracker (fake tensors and torch's fake
#   process group: bench/multigpu/fsdp_mem_tracker.py) on the same model and steps
# Prints figure, target and ratio side by side; a failed run prints its one-line reason.
#   XMEM_BUILD=/abs/build XMEM_VENV=/abs/venv bench/multigpu.sh [--small]
# --small: test 101's 4-layer decoder (batch 2 x 128) instead, a quick run.
# XMEM_BENCH_STEPS (default 3): optimizer steps.
set -uo pipefail
: "${XMEM_BUILD:?set XMEM_BUILD to an absolute build directory}"
src=$(cd "$(dirname "$0")/.." && pwd)
venv=${XMEM_VENV:-$src/.venv}
steps=${XMEM_BENCH_STEPS:-3}
model=(--size 7b --batch 1 --seq 2048) what="Llama-2-7B-shaped FSDP2, 1 x 2048"
for a in "$@"; do
    case $a in
    --small) model=() what="4-layer decoder FSDP2, 2 x 128" ;;
    *) echo "xmem: bench/multigpu.sh: unknown option $a (use --small)" >&2; exit 2 ;;
    esac
done
. "$src/bench/targets.bash"
bench_start multigpu

fsdp=$src/tests/workloads/torch2/fsdp.py

# estimate NAME N: xmem estimate --json of the job under torchrun --nproc-per-node N,
# measured; rank 0's trace kept in $tmp/NAME.trace (rank 1's in NAME.trace.rank1).
estimate() {
    measure "$1" "$XMEM_BUILD/bin/xmem-estimate" --mode fast --json --gpu H100-80GB --steps "$steps" \
        --timeout 1200 --keep-trace "$tmp/$1.trace" -- \
        torchrun --nproc-per-node "$2" "$fsdp" --meta-init "${model[@]}" --steps $((steps + 2))
}

# steps_peak TRACE: the most live device bytes from the first step on (the set-up before
# it is outside what FSDPMemTracker watches): ranks_check.py's, which test 101 holds to
# FSDPMemTracker too.
steps_peak() {
    "$venv/bin/python" -c "import sys; sys.path.insert(0, sys.argv[1]); from ranks_check import steps_peak
print(steps_peak(sys.argv[2]))" "$src/tests/workloads/torch2" "$1"
}

# rank_field NAME RANK KEY: KEY of rank RANK's entry in the estimate's JSON.
rank_field() {
    "$venv/bin/python" -c "import json, sys; j = json.load(open(sys.argv[1]))
print(next(r[sys.argv[3]] for r in j['ranks'] if r['rank'] == int(sys.argv[2])))" "$tmp/$1.out" "$2" "$3"
}

echo "xmem bench multi-GPU: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)')," \
    "$what, $steps optimizer steps, H100-80GB, $(nproc) CPUs"
printf '%-52s %10s %-4s %8s %6s\n' target figure "" limit ratio
ok8=0 ok1=0
if estimate ranks8 8; then
    ok8=1
    row "8 ranks: fast, end to end" "$(seconds ranks8)" s 60
    row "8 ranks: fast, max RSS" "$(rss_gib ranks8)" GiB 4
else
    fail_row "8 ranks: fast" 60 "$(why ranks8)"
fi
if estimate ranks1 1; then
    ok1=1
    printf '%-52s %10.2f %-4s\n' "1 rank: fast, end to end (the ratio's base)" "$(seconds ranks1)" s
else
    fail_row "1 rank: fast" - "$(why ranks1)"
fi
[ $ok8 = 1 ] && [ $ok1 = 1 ] &&
    row "8 ranks / 1 rank, estimate time" \
        "$(awk -v a="$(seconds ranks8)" -v b="$(seconds ranks1)" 'BEGIN { print a / b }')" x 2
# The roles run side by side where there are CPUs for them: the CPU time they cost, beside.
[ $ok8 = 1 ] && [ $ok1 = 1 ] &&
    printf '%-52s %10.2f %-4s\n' "8 ranks / 1 rank, CPU time (user + system)" \
        "$(awk -v a="$(cpu_seconds ranks8)" -v b="$(cpu_seconds ranks1)" 'BEGIN { print a / b }')" x

# Per rank, beside FSDPMemTracker: its peak is the bytes of live tensors (no allocator
# rounding, no cuBLAS workspace); xmem's trace peak over the steps is the same quantity, and
# the estimate's allocated peak adds what a GPU's allocator and cuBLAS add.
[ $ok8 = 1 ] || exit 0
echo
printf '%-5s %13s %14s %9s %8s %13s %13s %13s %6s\n' rank "xmem tensors" FSDPMemTracker "diff B" \
    "diff %" "xmem alloc." "xmem reserv." "xmem on GPU" "fmt s"
for rank in 0 1; do
    trace=$tmp/ranks8.trace
    [ $rank = 1 ] && trace=$tmp/ranks8.trace.rank1
    if ! "$venv/bin/python" "$src/bench/multigpu/fsdp_mem_tracker.py" --world 8 --rank $rank \
        "${model[@]}" --steps "$steps" >"$tmp/fmt$rank.out" 2>"$tmp/fmt$rank.err"; then
        printf '%-6s FSDPMemTracker FAILED: %s\n' $rank "$(grep -m1 -E 'Error|error' "$tmp/fmt$rank.err")"
        continue
    fi
    ours=$(steps_peak "$trace")
    read -r theirs secs < <("$venv/bin/python" -c "import json, sys; j = json.load(open(sys.argv[1]))
print(j['peak_bytes'], j['seconds'])" "$tmp/fmt$rank.out")
    awk -v r=$rank -v o="$ours" -v t="$theirs" -v a="$(rank_field ranks8 $rank allocated_peak_bytes)" \
        -v v="$(rank_field ranks8 $rank reserved_peak_bytes)" -v g="$(rank_field ranks8 $rank peak_bytes)" \
        -v s="$secs" 'BEGIN {
        m = 1048576; printf "%-5s %9.1f MiB %10.1f MiB %9d %+8.4f %9.1f MiB %9.1f MiB %9.1f MiB %6.1f\n",
            r, o / m, t / m, o - t, 100 * (o - t) / t, a / m, v / m, g / m, s }'
done
echo "xmem tensors: the trace's most live device bytes from step 1 on; FSDPMemTracker: its" \
    "peak (fake CPU tensors, torch's fake process group); xmem alloc./reserv.: the estimate's" \
    "allocator peaks (cuBLAS workspaces, 512-B blocks, segments); on GPU: with the CUDA context" \
    "and NCCL's buffers"
