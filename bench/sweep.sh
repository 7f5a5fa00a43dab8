#!/usr/bin/env bash
# make bench-estimate, the sweep's line (issue 30): a `--sweep` over four batch sizes, its
# wall time per value printed beside one fast estimate's and beside what starting Python and
# importing torch alone costs, in one run on the same machine. That import is what a sweep
# that forks after `import torch` would pay once instead of once per value (docs/estimate.md,
# "What a sweep costs"). ResNet-50 at 224x224 (tests/workloads/vision.py), 3 optimizer steps
# (XMEM_BENCH_STEPS); XMEM_BENCH_SWEEP (default 8,16,32,64) and XMEM_BENCH_SWEEP_JOBS
# (default 1: values one after another, so per value compares with one estimate) vary it.
# Runs standalone: XMEM_BUILD=/abs/build [XMEM_VENV=/abs/venv] bench/sweep.sh
set -euo pipefail
: "${XMEM_BUILD:?set XMEM_BUILD to an absolute build directory}"
src=$(cd "$(dirname "$0")/.." && pwd)
steps=${XMEM_BENCH_STEPS:-3}
values=${XMEM_BENCH_SWEEP:-8,16,32,64}
jobs=${XMEM_BENCH_SWEEP_JOBS:-1}
# The interpreter: XMEM_BENCH_PYTHON, else the venv's (XMEM_VENV, as make passes it), else python3.
py=${XMEM_BENCH_PYTHON:-python3}
[ -z "${XMEM_BENCH_PYTHON:-}" ] && [ -x "${XMEM_VENV:-}/bin/python3" ] && py=$XMEM_VENV/bin/python3
tmp=$(mktemp -d /tmp/xmem-bench-sweep.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
job=("$py" "$src/tests/workloads/vision.py" --model resnet50 --image-size 224
    --steps-per-epoch "$steps" --epochs 1)
estimate=("$XMEM_BUILD/bin/xmem-estimate" --mode fast --gpu A100-80GB --torch 2.1 --steps "$steps")

now() { date +%s.%N; }
t0=$(now)
"$py" -c 'import torch' || { echo "xmem: bench/sweep.sh: $py cannot import torch" >&2; exit 1; }
t1=$(now)
"${estimate[@]}" --json -- "${job[@]}" --batch-size 32 >"$tmp/single.json" 2>"$tmp/single.log" ||
    { echo "xmem: bench/sweep.sh: the single estimate failed:" >&2; tail -5 "$tmp/single.log" >&2; exit 1; }
t2=$(now)
"${estimate[@]}" --sweep "--batch-size=$values" --sweep-jobs "$jobs" -- "${job[@]}" \
    >"$tmp/sweep.out" 2>"$tmp/sweep.log" ||
    { echo "xmem: bench/sweep.sh: the sweep failed:" >&2; tail -5 "$tmp/sweep.log" >&2; exit 1; }
t3=$(now)
/usr/bin/python3 - "$t0" "$t1" "$t2" "$t3" "$values" "$jobs" "$tmp/single.json" <<'PY'
import json
import sys

t0, t1, t2, t3 = map(float, sys.argv[1:5])
values, jobs = sys.argv[5].split(","), int(sys.argv[6])
single = json.load(open(sys.argv[7]))
imp, one, sweep = t1 - t0, t2 - t1, t3 - t2
per = sweep / len(values)
print(f"sweep ResNet-50 bs{sys.argv[5]:14s} single fast estimate {one:6.1f} s (profile "
      f"{single['profile_seconds']:.1f} s) | sweep {sweep:6.1f} s for {len(values)} values, {jobs} at "
      f"once = {per:6.1f} s per value ({per / one:4.2f} x single) | python + import torch {imp:5.1f} s, "
      f"paid {len(values)} times")
PY
