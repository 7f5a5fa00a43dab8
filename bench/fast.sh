#!/usr/bin/env bash
# Fast mode against the exact capture and plain CPU training, side by side in one run:
# end-to-end wall time (interpreter start included) of 3 optimizer steps (XMEM_BENCH_STEPS)
# and the estimated peak on an A100-80GB with torch 2.1's allocator, the target of
# bench/estimate.sh, so the peaks `make bench-estimate` prints side by side are comparable;
# for ResNet-50 (batch 32, 224x224) and the GPT-2-small-like model (batch 8 x 512).
# Runs standalone:
#   XMEM_BUILD=/abs/build bench/fast.sh [--no-exact] [--no-plain]
# --no-exact / --no-plain skip the slow columns (minutes each on a 2-CPU node).
set -euo pipefail
: "${XMEM_BUILD:?set XMEM_BUILD to an absolute build directory}"
src=$(cd "$(dirname "$0")/.." && pwd)
workloads=$src/tests/workloads
exact=1 plain=1
for a in "$@"; do
    case $a in
    --no-exact) exact=0 ;;
    --no-plain) plain=0 ;;
    *) echo "xmem: bench/fast.sh: unknown option $a (use --no-exact, --no-plain)" >&2; exit 2 ;;
    esac
done
tmp=$(mktemp -d /tmp/xmem-bench-fast.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
steps=${XMEM_BENCH_STEPS:-3}

# timed NAME COMMAND...: runs COMMAND, leaves its wall seconds in $tmp/NAME.s.
timed() {
    local name=$1 start
    shift
    start=$(date +%s.%N)
    "$@" >"$tmp/$name.out" 2>&1 || { echo "xmem: bench/fast.sh: $name failed:" >&2; tail -5 "$tmp/$name.out" >&2; return 1; }
    /usr/bin/python3 -c "print($(date +%s.%N) - $start)" >"$tmp/$name.s"
}

peak() {
    "$XMEM_BUILD/bin/xmem-estimate" ${XMEM_CATALOG:+--catalog "$XMEM_CATALOG"} --json --gpu A100-80GB \
        --torch 2.1 \
        --trace-in "$1" | /usr/bin/python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["peak_bytes"] / 2**30))'
}

bench() {
    local name=$1
    shift
    timed "$name-fast" "$XMEM_BUILD/bin/xmem-profile-fast" --out "$tmp/$name-fast.trace" --steps $steps \
        --timeout 600 -- python3 "$@"
    local fast_s fast_peak exact_s=- exact_peak=- plain_s=-
    fast_s=$(cat "$tmp/$name-fast.s"); fast_peak=$(peak "$tmp/$name-fast.trace")
    if [ $exact -eq 1 ]; then
        timed "$name-exact" "$XMEM_BUILD/bin/xmem-profile" --out "$tmp/$name-exact.trace" --steps $steps \
            --timeout 1200 -- python3 "$@"
        exact_s=$(cat "$tmp/$name-exact.s"); exact_peak=$(peak "$tmp/$name-exact.trace")
    fi
    if [ $plain -eq 1 ]; then
        # Same intra-op threads as the profilers (bench/estimate/plain_run.py).
        timed "$name-plain" /usr/bin/python3 "$src/bench/estimate/plain_run.py" "$@" --epochs 1 \
            --steps-per-epoch $steps
        plain_s=$(cat "$tmp/$name-plain.s")
    fi
    printf '%-24s %10.1f %10s %10s %12s %12s\n' "$name" "$fast_s" "$exact_s" "$plain_s" "$fast_peak" "$exact_peak"
}

printf '%-24s %10s %10s %10s %12s %12s\n' workload fast_s exact_s plain_s fast_GiB exact_GiB
bench resnet50-b32-224 "$workloads/vision.py" --model resnet50 --batch-size 32 --image-size 224
# The same arguments as bench/estimate.sh (its default SGD), or the peaks are not comparable.
bench gpt2small-b8-512 "$workloads/transformer.py" --arch gpt --seq 512 --batch-size 8
echo "(wall seconds for $steps optimizer steps, interpreter start included; peak = xmem-estimate on A100-80GB, torch 2.1)"
