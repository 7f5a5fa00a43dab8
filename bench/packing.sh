#!/usr/bin/env bash
# make bench-packing: what packing buys a cluster, on the lab's real Slurm (issue 31). One
# workload (bench/packing/workload.py: N jobs at a set rate, true peaks and run times from a
# stated distribution, a fixed seed) is run four ways, one after the other, on the lab's fake
# GPUs, which enforce their capacity (tests/integration/lab/fake-gpu.sh):
#   whole     --gres=gpu:1, no --xmem: a GPU per job (queued as shard:10 in the shard lab,
#             docs/enforcement.md "Whole GPUs in a partition that packs")
#   shard+M   sbatch --xmem under the shard policy, at each margin of --margins (two)
#   mps       sbatch --xmem under the mps policy (a lab of its own), the first margin
# Each job's estimate is the lab's fake profiler's, its limit the true peak perturbed by
# make bench-accuracy's measured spread (workload.py says how); a job that runs out of GPU
# memory is requeued by the plugin as on a site (docs/enforcement.md, "After an OOM").
# The figures come from the fake GPU's event log (when each job held what, where) and from
# squeue after each run (final state, restarts): the lab's Slurm accounting is not read.
# Needs root, Slurm and MUNGE (the lab); XMEM_LAB_CLUSTER=1 runs it on the lab's cluster
# (two GPU nodes, four GPUs).
#
# Options (or the environment variables beside them):
#   --jobs N        XMEM_BENCH_PACKING_JOBS     jobs in the workload (100)
#   --rate R        XMEM_BENCH_PACKING_RATE     jobs submitted per second (2)
#   --seed S        XMEM_BENCH_PACKING_SEED     the workload's seed (31)
#   --max-seconds S XMEM_BENCH_PACKING_MAX_S    the longest run time (10; the shortest is 1)
#   --margins "A B" XMEM_BENCH_PACKING_MARGINS  the shard policy's two margins, % ("10 0")
#   --html FILE     XMEM_BENCH_PACKING_HTML     the picture (default: in the output directory)
#   --out DIR       XMEM_BENCH_PACKING_OUT      where the runs' data is kept (a temp dir)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export XMEM_SRC=${XMEM_SRC:-$(cd "$HERE/.." && pwd)}
N=${XMEM_BENCH_PACKING_JOBS:-100} RATE=${XMEM_BENCH_PACKING_RATE:-2} SEED=${XMEM_BENCH_PACKING_SEED:-31}
MAX_S=${XMEM_BENCH_PACKING_MAX_S:-10} MARGINS=${XMEM_BENCH_PACKING_MARGINS:-10 0}
OUT=${XMEM_BENCH_PACKING_OUT:-} HTML=${XMEM_BENCH_PACKING_HTML:-}
usage() { sed -n 's/^#   //p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --jobs) N=$2 ;;
    --rate) RATE=$2 ;;
    --seed) SEED=$2 ;;
    --max-seconds) MAX_S=$2 ;;
    --margins) MARGINS=$2 ;;
    --html) HTML=$2 ;;
    --out) OUT=$2 ;;
    *) usage ;;
    esac
    shift 2 || usage
done
read -r M1 M2 <<<"$MARGINS"
[[ $N =~ ^[1-9][0-9]*$ && ${M1:-x} =~ ^[0-9]+$ && ${M2:-x} =~ ^[0-9]+$ ]] ||
    { echo "bench-packing: --jobs needs a positive whole number and --margins two whole percents (\"10 0\")" >&2; exit 2; }
OUT=${OUT:-$(mktemp -d /tmp/xmem-bench-packing.XXXXXX)}
mkdir -p "$OUT"
HTML=${HTML:-$OUT/packing.html}
DEADLINE=${XMEM_BENCH_PACKING_DEADLINE:-1200} # seconds a way may take before its jobs count as lost
export XMEM_LAB_CPUS=32                        # a job takes a core; ten and more share a node

. "$XMEM_SRC/tests/integration/lab/lab.sh"
. "$XMEM_SRC/tests/integration/58-requeue-common.bash"
. "$XMEM_SRC/tests/integration/lab/packing.bash"
trap lab_down EXIT

python3 "$HERE/packing/workload.py" --jobs "$N" --rate "$RATE" --seed "$SEED" --gpu-mib "$LAB_GPU_MB" \
    --max-seconds "$MAX_S" >"$OUT/workload" || exit 1

# bench_lab KIND: a lab whose requeued jobs start again after 6 s and whose finished jobs stay
# in squeue for the run; the workload's scripts in its jobs directory.
bench_lab() {
    cd "$OUT" && lab_down # requeue_lab_up works in the lab's jobs directory, which goes with it
    requeue_lab_up "$1" >"$OUT/lab-$1.log" 2>&1 || { cat "$OUT/lab-$1.log"; exit 1; }
    sed -i 's/^MinJobAge=.*/MinJobAge=3600/' "$SLURM_CONF"
    timeout 30 scontrol reconfigure || exit 1
    packing_train_py "$J"
    while read -r i _at peak limit secs; do packing_script "$J/job$i.sbatch" "$limit" "$peak" "$secs"; done <"$OUT/workload"
}

# set_margin M: the shard or mps policy's margin, rendered for the controller's Lua.
set_margin() {
    sed -i "s/^  margin_percent: .*/  margin_percent: $1/" "$LAB/etc/xmem.yaml"
    lab_write_policy "$LAB_KIND"
    kill -HUP "$(cat "$LAB/run/xmemd.pid")"
    sleep 1
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run_way NAME SBATCH_ARGS...: the workload submitted at its rate, then waited for; its
# data in $OUT/NAME.
run_way() {
    local name=$1 d=$OUT/$1 t0 due wait_ms job ids=() left deadline
    shift
    mkdir -p "$d" && packing_reset && : >"$d/submits"
    echo "bench-packing: $name: submitting $N jobs at $RATE/s" >&2
    t0=$(now_ms)
    while read -r i at _rest; do
        due=$((t0 + 10#${at/./} * 10)) # at has two decimals: hundredths of a second
        wait_ms=$((due - $(now_ms)))
        [ "$wait_ms" -le 0 ] || sleep "$(awk -v m="$wait_ms" 'BEGIN {print m / 1000}')"
        job=$(lab_jobid "$(cd "$J" && timeout 120 sbatch "$@" -o "$d/%j.out" "job$i.sbatch" 2>>"$d/sbatch.err")")
        [ -n "$job" ] || { echo "bench-packing: $name: job $i was not submitted ($(tail -n 1 "$d/sbatch.err"))" >&2; continue; }
        echo "$job $(now_ms)" >>"$d/submits"
        ids+=("$job")
    done <"$OUT/workload"
    deadline=$(($(date +%s) + DEADLINE))
    while :; do
        left=$(timeout 30 squeue -h -t PD,R,CG,CF,RQ,RH,S,SE -j "$(IFS=,; echo "${ids[*]}")" -o %i 2>/dev/null | wc -l)
        [ "$left" = 0 ] && break
        [ "$(date +%s)" -lt "$deadline" ] || { echo "bench-packing: $name: $left jobs still queued after ${DEADLINE} s; cancelled" >&2; break; }
        sleep 2
    done
    timeout 30 squeue -h -t all -j "$(IFS=,; echo "${ids[*]}")" -O 'JobID:12,State:16,RestartCnt:6' >"$d/states"
    timeout 30 scancel "${ids[@]}" 2>/dev/null
    cp "$LAB/gpu/events" "$d/events" 2>/dev/null
}

python3 "$HERE/packing/workload.py" --jobs "$N" --rate "$RATE" --seed "$SEED" --max-seconds "$MAX_S" --describe
bench_lab shard
gpus=$(($(timeout 10 sinfo -h -N -p debug -o %N | sort -u | wc -l) * LAB_GPUS))
echo "lab: $gpus GPUs of $LAB_GPU_MB MiB ($LAB_SHARDS_PER_GPU shards, $LAB_MPS_PER_GPU mps each)$([ "${XMEM_LAB_CLUSTER:-0}" = 1 ] && echo ", the cluster lab")"
run_way whole
set_margin "$M1"
run_way "shard+$M1%" --xmem
set_margin "$M2"
run_way "shard+$M2%" --xmem
bench_lab mps
set_margin "$M1"
run_way "mps+$M1%" --xmem
cd "$OUT" && lab_down

echo "data: the fake GPU's event log and squeue (final states, restarts), in $OUT"
python3 "$HERE/packing/report.py" --jobs "$N" --gpus "$gpus" --gpu-mib "$LAB_GPU_MB" --shards "$LAB_SHARDS_PER_GPU" \
    --mps "$LAB_MPS_PER_GPU" --html "$HTML" \
    "whole=$OUT/whole" "shard+$M1%=$OUT/shard+$M1%" "shard+$M2%=$OUT/shard+$M2%" "mps+$M1%=$OUT/mps+$M1%"
echo "picture: $HTML"
