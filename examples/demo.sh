#!/usr/bin/env bash
# demo.sh — `make demo`: xmem on a real (one-node, localhost) Slurm cluster.
#
# Starts munged, slurmctld, slurmd (two fake GPUs, 10 shards each) and xmemd in a scratch
# directory, submits the bundled training job (examples/train.sbatch, which asks for
# --gres=gpu:1) without and with --xmem, shows the request before and after, runs two
# resized jobs side by side on one GPU, and stops everything by pid.
#
# Needs root (munged, slurmd) and a build: XMEM_BUILD=/path/to/build (make demo sets it).
# The estimate comes from the real xmem-estimate when it is built with its capture library
# and python3 has torch; otherwise from the lab's deterministic fake profiler (it says so).
set -u
here=$(cd "$(dirname "$0")" && pwd)
export XMEM_SRC=${XMEM_SRC:-$(cd "$here/.." && pwd)}
export XMEM_BUILD=${XMEM_BUILD:-$XMEM_SRC/build}
. "$XMEM_SRC/tests/integration/lab/lab.sh"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() {
    echo "\$ $*"
    "$@"
}
die() {
    echo "demo: $*" >&2
    exit 1
}
trap 'lab_down' EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || die "run as root (it starts munged and slurmd): sudo make demo"
[ -f "$XMEM_BUILD/lib/xmem.so" ] || die "no $XMEM_BUILD/lib/xmem.so: build first (make)"
[ -x "$XMEM_BUILD/bin/xmemd" ] || die "no $XMEM_BUILD/bin/xmemd: build first (make)"

# Jobs and xmemd resolve python3 through PATH: prefer one that has torch (Debian's).
lab_prefer_torch_python

say "Starting a one-node Slurm cluster with xmem (munged, slurmctld, slurmd, xmemd)"
if lab_real_profiler_ok; then
    echo "estimates: the real xmem-estimate (profiles the job on this CPU; the first takes a while)"
    export XMEM_LAB_TIMEOUT=600
else
    echo "estimates: xmem-estimate is not built with its capture library (or python3 lacks torch);"
    echo "           using the lab's fake profiler, which answers a fixed 12 GiB estimate"
    export XMEM_LAB_PROFILER=fake
fi
lab_up shard || die "the cluster did not start"
[ "$LAB_XMEMD" = 1 ] || die "xmemd did not start"
show sinfo -N -o "%N %T %G"
cp "$here/train.py" "$here/train.sbatch" "$LAB/jobs/"
cd "$LAB/jobs" || die "no $LAB/jobs"

say "The job: an ordinary batch script that asks for one whole GPU"
grep -v '^#!' train.sbatch

say "Before: submitted without --xmem (held, for comparison)"
before=$(lab_jobid "$(sbatch --hold train.sbatch)")
echo "scontrol show job $before:"
timeout 10 scontrol show job "$before" | grep -E 'TresPerNode|JobName'
timeout 10 scancel "$before"

say "After: sbatch --xmem train.sbatch"
out=$(timeout 900 sbatch --xmem train.sbatch 2>&1)
echo "$out"
a=$(lab_jobid "$out")
[ -n "$a" ] || die "submission failed"
echo "scontrol show job $a:"
timeout 10 scontrol show job "$a" | grep -E 'TresPerNode|Comment'

say "A second such job (answered from xmemd's cache) shares the same GPU"
out=$(timeout 900 sbatch --xmem train.sbatch 2>&1)
echo "$out"
b=$(lab_jobid "$out")
[ -n "$b" ] || die "second submission failed"
lab_wait_state "$a" 60 RUNNING COMPLETED >/dev/null 2>&1
lab_wait_state "$b" 60 RUNNING COMPLETED >/dev/null 2>&1
show squeue -o "%.6i %.10j %.9T %.20b %R"
for j in "$a" "$b"; do
    echo "job $j: $(timeout 10 scontrol show job -d "$j" | grep -oE ' GRES=[^ ]*\(IDX:[0-9,-]*\)' | head -n 1)"
done

say "Both jobs finish; each ran within its share"
lab_wait_state "$a" 300 COMPLETED FAILED >/dev/null
lab_wait_state "$b" 300 COMPLETED FAILED >/dev/null
for j in "$a" "$b"; do
    echo "--- xmem-demo-$j.out ($(lab_field "$j" JobState))"
    cat "xmem-demo-$j.out"
done
if command -v sqlite3 >/dev/null; then
    say "xmemd's ledger: the estimate and how each job ended (reported by slurmstepd)"
    sqlite3 -header -column "$LAB/state/xmem-ledger.sqlite" \
        "select request_id, job_id, exit_status, elapsed_seconds, peak_bytes, limit_bytes from job_accuracy order by job_id"
fi

say "Stopping the cluster"
lab_down
trap - EXIT
echo "done. (The allocator-replay demo is separate: examples/sim-demo.sh)"
