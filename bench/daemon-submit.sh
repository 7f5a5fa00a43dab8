#!/usr/bin/env bash
# The second part of make bench-daemon (bench/daemon.sh runs it): the time from `sbatch --xmem`
# until the job is queued with its final GPU request, on the lab's real Slurm (docs/async.md),
# p50 and p99 over XMEM_BENCH_SUBMITS submissions (default 10) each of:
#   cache hit           — the same script again: answered from xmemd's cache, sbatch waits
#   fast-mode miss      — a new script whose profile takes 1 s (the lab's fake profiler stands
#                         in for fast mode): answered within the 2 s budget, sbatch waits
#   exact miss, async   — a new script whose profile takes 8 s (an exact-mode stand-in): sbatch
#                         returns after the budget; the job's request is final when xmemd's
#                         signed update narrows it (polled every 0.1 s)
#   exact miss, sync    — the same with interactive_budget_s 0: sbatch waits for the estimate
# and, for each, how long sbatch itself took. Needs root, Slurm and MUNGE (the lab).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export XMEM_SRC=${XMEM_SRC:-$(cd "$HERE/.." && pwd)} XMEM_LAB_PROFILER=fake XMEM_LAB_BUDGET=2
N=${XMEM_BENCH_SUBMITS:-10}
. "$XMEM_SRC/tests/integration/lab/lab.sh"
trap lab_down EXIT
lab_up shard >/dev/null 2>&1 || { echo "bench-daemon: no Slurm lab here (root, Slurm, MUNGE); submit figures skipped"; exit 0; }
cd "$LAB/jobs" || exit 1
echo pass >train.py

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# script NAME LIMIT SLEEP: a one-GPU job whose profile takes SLEEP seconds.
script() { printf '#!/bin/bash\n#SBATCH --gres=gpu:1\npython3 train.py --fake-limit-mb=%s --fake-sleep=%s\n' "$2" "$3" >"$1"; }
# final JOB: true once the job's request is its final one (not the held shard:10 form).
final() { ! timeout 5 scontrol show job -o "$1" | grep -q 'AdminComment=xmem: estimating'; }
# measure NAME LIMIT_BASE SLEEP: N submissions of new scripts (NAME "hit": warm.sbatch again);
# prints "sbatch_ms final_ms" lines.
measure() {
    local i t0 t1 out job file
    for ((i = 0; i < N; i++)); do
        file=warm.sbatch
        if [ "$1" != hit ]; then
            file=$1-$i.sbatch
            script "$file" $(($2 + i)) "$3"
        fi
        t0=$(now_ms)
        out=$(sbatch --xmem -o /dev/null "$file" 2>&1)
        t1=$(now_ms)
        job=$(lab_jobid "$out")
        while ! final "$job"; do sleep 0.1; done
        echo "$((t1 - t0)) $(($(now_ms) - t0))"
        timeout 5 scancel "$job"
    done
}
pct() { sort -n | awk -v p="$1" '{a[NR] = $1} END {i = int((NR - 1) * p / 100 + 0.5) + 1; print a[i]}'; }
row() {
    printf "  %-22s %10s %10s %10s %10s\n" "$1" "$(cut -d' ' -f1 "$2" | pct 50)" "$(cut -d' ' -f1 "$2" | pct 99)" \
        "$(cut -d' ' -f2 "$2" | pct 50)" "$(cut -d' ' -f2 "$2" | pct 99)"
}

script warm.sbatch 4000 0
sbatch --xmem -o /dev/null warm.sbatch >/dev/null 2>&1 # fills the cache for the hits
measure hit 4000 0 >hit.txt
measure fast 5000 1 >fast.txt
measure exact 6000 8 >async.txt
sed -i 's/^interactive_budget_s: .*/interactive_budget_s: 0/' "$LAB/etc/xmem.yaml"
kill -HUP "$(cat "$LAB/run/xmemd.pid")" && sleep 1
measure exactsync 7000 8 >sync.txt

echo "sbatch --xmem -> job queued with its final request, on the lab's Slurm ($N submissions each, ms)"
printf "  %-22s %10s %10s %10s %10s\n" "" "sbatch p50" "sbatch p99" "final p50" "final p99"
row "cache hit" hit.txt
row "fast-mode miss (1 s)" fast.txt
row "exact miss (8 s), async" async.txt
row "exact miss (8 s), sync" sync.txt
echo "  (interactive_budget_s 2, then 0 for the synchronous row; profiles are the lab's fake one)"
