#!/usr/bin/env bash
# Capture overhead, side by side in one run: the same workload plain on the CPU (no xmem)
# and under xmem-profile, same thread count, per-step wall times and totals.
#   overhead.sh BUILD STEPS WORKLOAD.py ARGS...
# e.g. overhead.sh build 4 vision.py --model resnet18 --batch-size 8 --image-size 224
set -euo pipefail
build=$(cd "$1" && pwd); steps=$2; script=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
threads=$(nproc)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The workload prints "step N SECONDS s" after each step (--time). The captured run exits
# inside step STEPS, so both runs report steps 1..STEPS-1.
plain_start=$(date +%s.%N)
OMP_NUM_THREADS=$threads /usr/bin/python3 -c "import torch, runpy, sys
torch.set_num_threads($threads); sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name='__main__')" "$here/$script" "$@" --time \
    --steps-per-epoch "$steps" >"$tmp/plain"
plain_end=$(date +%s.%N)
"$build/bin/xmem-profile" --out "$tmp/trace" --steps "$steps" --threads "$threads" --timeout 600 \
    -- python3 "$here/$script" "$@" --time --steps-per-epoch "$((steps + 1))" >"$tmp/captured"
capture_end=$(date +%s.%N)

/usr/bin/python3 - "$tmp" "$steps" "$plain_start" "$plain_end" "$capture_end" <<'PY'
import re, sys
tmp, steps, t0, t1, t2 = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:])
def times(path):
    return [float(m.group(2)) for m in re.finditer(r"^step (\d+) ([\d.]+) s$", open(path).read(), re.M)]
plain, cap = times(f"{tmp}/plain")[: steps - 1], times(f"{tmp}/captured")
events = {}
it = 0
for line in open(f"{tmp}/trace"):
    k = line[0]
    if k == "I": it = int(line.split()[1])
    elif k in "AF": events[it] = events.get(it, 0) + 1
print("step  plain_s  captured_s  ratio")
for i, (p, c) in enumerate(zip(plain, cap), 1):
    print(f"{i:4d}  {p:7.3f}  {c:10.3f}  {c / p:5.2f}")
steady_p, steady_c = sum(plain[1:]), sum(cap[1:])
if steady_p:
    print(f"steady steps 2..{len(cap)}: plain {steady_p:.3f} s, captured {steady_c:.3f} s, ratio {steady_c / steady_p:.2f}")
print(f"whole process: plain {t1 - t0:.1f} s ({steps} steps), captured {t2 - t1:.1f} s (to the end of step {steps}, trace written)")
print("events (A+F) per iteration:", {k: v for k, v in sorted(events.items())})
PY
