#!/usr/bin/env bash
# Issue 16's targets as benchmark figures (not timed tests), on torch 2.x from the project
# venv first on PATH, as a user with an activated venv runs `xmem estimate`:
#   fast mode, end to end (interpreter start included), with the largest process's RSS:
#     ResNet-50 batch 32 at 224 px          <= 3 s
#     GPT-2-small batch 8 x 1024            <= 5 s
#     Llama-2-7B-shaped LoRA, bf16 weights, batch 1 x 2048, gradient checkpointing
#                                           <= 30 s and <= 4 GiB RSS
#   exact mode on small workloads (ResNet-18 batch 16 at 224 px, the tiny GPT-2 at 8 x 512):
#     total time <= 1.1 x the same script's own CPU time for the same steps
#     reserved peak (the allocator's, no context) within 1 % of fast mode's
# Prints figure, target and ratio side by side; a failed run prints its one-line reason.
#   XMEM_BUILD=/abs/build XMEM_VENV=/abs/venv bench/targets.sh [--no-7b]
# --no-7b skips the Llama-2-7B LoRA run. XMEM_BENCH_STEPS (default 3): optimizer steps.
set -uo pipefail
: "${XMEM_BUILD:?set XMEM_BUILD to an absolute build directory}"
src=$(cd "$(dirname "$0")/.." && pwd)
venv=${XMEM_VENV:-$src/.venv}
t2=$src/tests/workloads/torch2
steps=${XMEM_BENCH_STEPS:-3}
big=1
for a in "$@"; do
    case $a in
    --no-7b) big=0 ;;
    *) echo "xmem: bench/targets.sh: unknown option $a (use --no-7b)" >&2; exit 2 ;;
    esac
done
. "$src/bench/targets.bash"
bench_start targets

# estimate NAME MODE SCRIPT ARGS...: xmem estimate --json of a torch2 workload, measured.
estimate() {
    local name=$1 mode=$2 script=$3
    shift 3
    measure "$name" "$XMEM_BUILD/bin/xmem-estimate" --mode "$mode" --json --gpu A100-80GB --steps "$steps" \
        --timeout 1200 -- python "$t2/$script" --steps $((steps + 2)) "$@"
}

reserved_peak() { "$venv/bin/python" -c "import json; print(json.load(open('$tmp/$1.out'))['reserved_peak_bytes'])"; }

fast_target() {
    local name=$1 what=$2 secs=$3 rss=$4
    shift 4
    if estimate "$name" fast "$@"; then
        row "$what: fast, end to end" "$(seconds "$name")" s "$secs"
        [ -n "$rss" ] && row "$what: fast, max RSS" "$(rss_gib "$name")" GiB "$rss"
    else
        fail_row "$what: fast" "$secs" "$(why "$name")"
    fi
}

# exact_target NAME WHAT SCRIPT ARGS...: exact mode vs the script alone on the CPU, and the
# exact vs fast reserved peaks.
exact_target() {
    local name=$1 what=$2 script=$3
    shift 3
    measure "$name-plain" env XMEM_WORKLOAD_DEVICE=cpu python "$t2/$script" --steps "$steps" "$@" ||
        { fail_row "$what: plain CPU run" - "$(why "$name-plain")"; return; }
    if estimate "$name-exact" exact "$script" "$@"; then
        row "$what: exact / plain CPU time" \
            "$(awk -v a="$(seconds "$name-exact")" -v b="$(seconds "$name-plain")" 'BEGIN { print a / b }')" x 1.1
    else
        fail_row "$what: exact" 1.1 "$(why "$name-exact")"; return
    fi
    if estimate "$name-fast" fast "$script" "$@"; then
        local e f
        e=$(reserved_peak "$name-exact") f=$(reserved_peak "$name-fast")
        row "$what: |fast - exact| / exact reserved" "$(awk -v e="$e" -v f="$f" 'BEGIN { d = f - e; if (d < 0) d = -d; print 100 * d / e }')" % 1
    else
        fail_row "$what: fast vs exact" 1 "$(why "$name-fast")"
    fi
}

echo "xmem bench targets: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') from $venv," \
    "$steps optimizer steps, A100-80GB, $(nproc) CPUs"
printf '%-52s %10s %-4s %8s %6s\n' target figure "" limit ratio
fast_target resnet50 "ResNet-50 bs32 224px" 3 "" vision.py --model resnet50 --batch 32 --image-size 224
fast_target gpt2 "GPT-2-small bs8 x 1024" 5 "" hf_lm.py --arch gpt2 --size full --batch 8 --seq 1024
[ $big = 1 ] && fast_target llama7b "Llama-2-7B LoRA bf16 1 x 2048 ckpt" 30 4 \
    hf_lm.py --arch llama --size 7b --lora --dtype bf16 --checkpointing --batch 1 --seq 2048
# Steps long enough (about 1 s each here) that the ratio is not the interpreter's start alone.
exact_target resnet18 "ResNet-18 bs16 224px" vision.py --model resnet18 --batch 16 --image-size 224 --classes 10
exact_target gpt2-tiny "GPT-2 tiny bs8 x 512" hf_lm.py --arch gpt2 --batch 8 --seq 512
