#!/usr/bin/env bash
# make bench-estimate: how long `xmem estimate` takes, split into profiling and analysis,
# next to the same training iterations run on the CPU without xmem, in the same run.
#   ResNet-50, batch 32, 224x224 (tests/workloads/vision.py)
#   GPT-2-small-like, batch 8 x 512 tokens (tests/workloads/transformer.py)
# Targets: analysis + simulation <= 1 s; total <= 1.3 x the plain CPU iterations. Each job's
# second line: the exact capture's largest process RSS (/usr/bin/time) beside the trace's
# allocated peak (docs/capture.md, "Memory").
# XMEM_BENCH_STEPS (default 3) sets the optimizer steps of both runs. Both compute with the
# same intra-op threads: xmem-profile's rule (all CPUs in the affinity mask, docs/capture.md),
# or XMEM_BENCH_THREADS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=${XMEM_BUILD:-$src/build}
steps=${XMEM_BENCH_STEPS:-3}
py=/usr/bin/python3
threads_from="XMEM_BENCH_THREADS"
if [ -z "${XMEM_BENCH_THREADS:-}" ]; then
    threads_from="CPUs in the affinity mask, as xmem-profile"
    XMEM_BENCH_THREADS=$("$py" -c 'import os; print(len(os.sched_getaffinity(0)))')
fi
threads=$XMEM_BENCH_THREADS
for exe in xmem-estimate xmem-profile; do
    [ -x "$build/bin/$exe" ] || { echo "xmem: bench-estimate: $build/bin/$exe missing; run make first" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/xmem-bench-estimate.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

bench() {
    local name=$1
    shift
    local job=("$@")
    local t0 t1 t2
    t0=$(now)
    "$py" "$here/estimate/plain_run.py" --threads "$threads" "${job[@]}" >"$tmp/plain.log" 2>&1 ||
        { echo "xmem: bench-estimate: $name without xmem failed:" >&2; tail -n 5 "$tmp/plain.log" >&2; exit 1; }
    t1=$(now)
    /usr/bin/time -f %M -o "$tmp/rss_kib" \
        "$build/bin/xmem-estimate" --mode exact --gpu A100-80GB --torch 2.1 --json --steps "$steps" \
        --threads "$threads" -- "$py" "${job[@]}" \
        >"$tmp/est.json" 2>"$tmp/est.log" ||
        { echo "xmem: bench-estimate: xmem estimate of $name failed:" >&2; tail -n 5 "$tmp/est.log" >&2; exit 1; }
    t2=$(now)
    "$py" - "$name" "$t0" "$t1" "$t2" "$tmp/est.json" "$(cat "$tmp/rss_kib")" <<'PY'
import json, sys
name, t0, t1, t2, path = sys.argv[1], *map(float, sys.argv[2:5]), sys.argv[5]
rss = int(sys.argv[6]) << 10
j = json.load(open(path))
plain, total = t1 - t0, t2 - t1
analysis = j["analyze_seconds"]
print(f"{name:28s} plain {plain:7.1f} s | xmem total {total:7.1f} s = profile {j['profile_seconds']:7.1f} s"
      f" + analysis {analysis:6.3f} s | ratio {total / plain:4.2f} (target <= 1.30)"
      f" | analysis {'ok' if analysis <= 1.0 else 'OVER'} (<= 1 s) | peak {j['peak_bytes'] / 2**30:.2f} GiB")
# The exact capture holds the job's tensors on the host: its RSS beside the trace's peak.
allocated = j["allocated_peak_bytes"]
print(f"{'':28s} capture host RSS {rss / 2**30:.2f} GiB | trace's allocated peak {allocated / 2**30:.2f} GiB"
      f" | RSS / peak {rss / max(allocated, 1):.2f}")
PY
}

echo "xmem bench-estimate: $steps optimizer steps each, $threads intra-op threads each ($threads_from)," \
    "peaks for A100-80GB with torch 2.1's allocator, host torch $("$py" -c 'import torch; print(torch.__version__)')"
bench "ResNet-50 bs32 224px" "$src/tests/workloads/vision.py" --model resnet50 --batch-size 32 \
    --image-size 224 --steps-per-epoch "$steps" --epochs 1
bench "GPT-2-small bs8 x 512" "$src/tests/workloads/transformer.py" --arch gpt --seq 512 --batch-size 8 \
    --steps-per-epoch "$steps" --epochs 1
