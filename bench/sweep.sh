#!/usr/bin/env bash
# make bench-estimate, the sweep's line (issue 30): a `--sweep` over four batch sizes (in fast
# mode its values' jobs fork from one zygote that imported torch: docs/estimate.md, "What a
# sweep costs"), its wall time per value printed beside one fast estimate's and beside what
# starting Python and importing torch alone costs, in one run on the same machine. Then the
# same values captured by bench/estimate/fork_sweep.py, the bench-only prototype of that
# design (no launcher around its children); its traces' peaks must equal the sweep's, and
# the sweep's peak of the single estimate's batch must equal it, byte for byte. ResNet-50 at 224x224
# (tests/workloads/vision.py), 3 optimizer steps (XMEM_BENCH_STEPS); XMEM_BENCH_SWEEP (default
# 8,16,32,64) and XMEM_BENCH_SWEEP_JOBS (default 1: values one after another, so per value
# compares with one estimate) vary it.
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
"${estimate[@]}" --json --sweep "--batch-size=$values" --sweep-jobs "$jobs" -- "${job[@]}" \
    >"$tmp/sweep.json" 2>"$tmp/sweep.log" ||
    { echo "xmem: bench/sweep.sh: the sweep failed:" >&2; tail -5 "$tmp/sweep.log" >&2; exit 1; }
t3=$(now)
# The prototype: the launcher's environment for fast mode, without the launcher.
threads=$(/usr/bin/python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
mkdir "$tmp/fork"
PYTHONPATH=$src/daemon/profiler/fast/python XMEM_EXACT_PYDIR=$src/daemon/profiler/python \
    XMEM_STEPS=$steps XMEM_THREADS=$threads OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads \
    "$py" "$src/bench/estimate/fork_sweep.py" "$tmp/fork" --batch-size "$values" "${job[@]:1}" \
    >"$tmp/fork.log" 2>&1 ||
    { echo "xmem: bench/sweep.sh: the fork prototype failed:" >&2; tail -5 "$tmp/fork.log" >&2; exit 1; }
t4=$(now)
for v in ${values//,/ }; do
    "$XMEM_BUILD/bin/xmem-estimate" --gpu A100-80GB --torch 2.1 --json --trace-in "$tmp/fork/$v.xtrace" \
        >"$tmp/fork/$v.json"
done
/usr/bin/python3 - "$t0" "$t1" "$t2" "$t3" "$t4" "$values" "$jobs" "$tmp" <<'PY'
import json
import sys

t0, t1, t2, t3, t4 = map(float, sys.argv[1:6])
values, jobs, tmp = sys.argv[6].split(","), int(sys.argv[7]), sys.argv[8]
single = json.load(open(f"{tmp}/single.json"))
sweep = {p["value"]: p.get("peak_bytes") for p in json.load(open(f"{tmp}/sweep.json"))["points"]}
forked = {v: json.load(open(f"{tmp}/fork/{v}.json"))["peak_bytes"] for v in values}
swept_json = json.load(open(f"{tmp}/sweep.json"))
same = all(sweep[v] == forked[v] for v in values)
same_single = sweep.get("32", single["peak_bytes"]) == single["peak_bytes"]
paid = "once (forked from one zygote)" if swept_json.get("forked") else f"{len(values)} times"
child = [float(line.split()[2]) for line in open(f"{tmp}/fork.log") if line.startswith("value ")]
imp, one, swept, fork = t1 - t0, t2 - t1, t3 - t2, t4 - t3
per, fork_per = swept / len(values), fork / len(values)
print(f"sweep ResNet-50 bs{sys.argv[6]}: single fast estimate {one:.1f} s (profile "
      f"{single['profile_seconds']:.1f} s) | sweep {swept:.1f} s for {len(values)} values, {jobs} at "
      f"once = {per:.1f} s per value ({per / one:.2f} x single) | python + import torch {imp:.1f} s, "
      f"paid {paid}; batch 32's peak equal to the single estimate's: {'yes' if same_single else 'NO'}")
print(f"  fork after import (prototype, bench/estimate/fork_sweep.py): {fork:.1f} s = {fork_per:.1f} s "
      f"per value ({fork_per / one:.2f} x single; a child {sum(child) / len(child):.1f} s from fork to "
      f"exit), import once; peaks equal to the sweep's: "
      f"{'yes' if same else 'NO ' + str((sweep, forked))}")
PY
