#!/bin/bash
# fake-gpu.sh — the lab's fake GPU memory, which enforces capacity: a job runs it to hold
# its true peak on the GPU Slurm gave it for its run time. There is no GPU here, so each of
# the lab's fake GPUs (lab.sh: $LAB/dev/nvidiaN on each node) has a ledger file,
# GPU_DIR/<node>.nvidia<N>, one line per job holding memory on it ("jobid pid MiB"),
# read and written only under flock(1) on the file. A job fails the way a real GPU makes a
# PyTorch job fail (PyTorch's "CUDA out of memory" message on stderr, exit status 1, which
# the plugin's OOM scan reads: docs/enforcement.md, "After an OOM") when
#   - its peak plus what its neighbours hold exceeds the GPU's memory (GPU_DIR/capacity_mib,
#     the lab's LAB_GPU_MB): the job that allocates last fails, as on a GPU; or
#   - its peak exceeds the limit the node holds it to (docs/enforcement.md, "The levels"):
#     the job cgroup's dmem.max (the kernel's: always), or CUDA_MPS_PINNED_DEVICE_MEM_LIMIT,
#     which only an MPS server reads: it holds the job when the job is an MPS client (gres/mps
#     sets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, or an MPS control pipe is there); a shard job on
#     a node without MPS is held by nothing but the GPU's capacity.
# While it holds, its `sleep` carries XMEM_FAKE_NVML_MIB/XMEM_FAKE_NVML_GPU, so the fake
# NVML (tests/unit/plugin/fake_nvml.c) reports the job's use to the plugin's sampler.
# Every start, end and OOM is one line of GPU_DIR/events ("ms gpu event job restart MiB
# held_after share", the share as Slurm gave it: shard:N, mps:P or gpu), which the packing
# bench and test 124 read (bench/packing.sh).
#
# Usage: fake-gpu.sh --gpu-dir=DIR --true-peak-mb=N --seconds=S [other arguments are ignored:
#        the lab's fake profiler reads its own, --fake-*, from the same command line]
# Bash and flock rather than C: the state is a text file a test can read, and flock(1)
# gives the ledger its lock in one line; a job killed by Slurm leaves a line whose pid is
# dead, which the next job's pass drops.
set -u
dir= peak= secs=
for a in "$@"; do
    case $a in
    --gpu-dir=*) dir=${a#*=} ;;
    --true-peak-mb=*) peak=${a#*=} ;;
    --seconds=*) secs=${a#*=} ;;
    esac
done
die() {
    echo "fake-gpu: $*" >&2
    exit 2
}
[ -d "$dir" ] || die "--gpu-dir=DIR must name the lab's GPU directory (lab.sh makes \$LAB/gpu)"
[[ $peak =~ ^[0-9]+$ ]] || die "--true-peak-mb=N must be a whole number of MiB, not '$peak'"
[[ $secs =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--seconds=S must be a number of seconds, not '$secs'"
capacity=$(cat "$dir/capacity_mib") || die "no $dir/capacity_mib"
job=${SLURM_JOB_ID:-$$} restart=${SLURM_RESTART_COUNT:-0}
# The job's GPU: the first device CUDA would see. Without one, CUDA finds no GPU.
index=${CUDA_VISIBLE_DEVICES%%,*}
[[ $index =~ ^[0-9]+$ ]] || {
    echo "RuntimeError: No CUDA GPUs are available (CUDA_VISIBLE_DEVICES='${CUDA_VISIBLE_DEVICES-}')" >&2
    exit 1
}
gpu=${SLURMD_NODENAME:-$(hostname -s)}.nvidia$index
ledger=$dir/$gpu

share=gpu
[ -z "${SLURM_SHARDS_ON_NODE:-}" ] || share=shard:$SLURM_SHARDS_ON_NODE
[ -z "${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-}" ] || share=mps:$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE

now_ms() { echo $(($(date +%s%N) / 1000000)); }
event() { echo "$(now_ms) $gpu $1 $job $restart $peak $2 $share" >>"$dir/events"; }

# mib_of TEXT: a byte count or "NM"/"NG" as MiB; empty for anything else ("max").
mib_of() {
    case $1 in
    *[!0-9MG]* | '') ;;
    *M) echo "${1%M}" ;;
    *G) echo $((${1%G} * 1024)) ;;
    *) echo $(($1 / 1048576)) ;;
    esac
}

# The limit the node holds the job to, in MiB, and by what; none when nothing holds it.
limit_mib= limit_by=
mps_client() {
    local pipe=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}/control
    [ -n "${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-}" ] || [ -p "$pipe" ] || [ -S "$pipe" ]
}
lower_limit() { # MIB BY
    [ -n "$1" ] || return 0
    if [ -z "$limit_mib" ] || [ "$1" -lt "$limit_mib" ]; then limit_mib=$1 limit_by=$2; fi
}
if mps_client && [ -n "${CUDA_MPS_PINNED_DEVICE_MEM_LIMIT:-}" ]; then
    # "0=4096M,1=..." : the entry of device 0, the job's first visible GPU.
    lower_limit "$(mib_of "$(tr ',' '\n' <<<"$CUDA_MPS_PINNED_DEVICE_MEM_LIMIT" | sed -n 's/^0=//p')")" \
        "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"
fi
# dmem.max of the job's cgroup: where the node's plugstack job_cgroup= puts it (the lab's
# fake cgroup tree), each line "REGION BYTES|max".
conf=${SLURM_CONF:-/etc/slurm/slurm.conf}
pattern=$(grep -o 'job_cgroup=[^ ]*' "${conf%/*}/plugstack.conf" 2>/dev/null | head -n 1)
if [ -n "$pattern" ]; then
    cg=${pattern#job_cgroup=}
    cg=${cg//%j/$job}
    while read -r _ bytes; do lower_limit "$(mib_of "$bytes")" dmem.max; done <"$cg/dmem.max" 2>/dev/null
fi

oom() { # FREE_MIB WHY
    event oom "$1"
    echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate $peak MiB. GPU 0 has a total capacity of $capacity MiB of which $1 MiB is free. $2" >&2
    exit 1
}
if [ -n "$limit_mib" ] && [ "$peak" -gt "$limit_mib" ]; then
    oom "$limit_mib" "The process is held to $limit_mib MiB ($limit_by)."
fi

# Reserve under the ledger's lock: drop the lines of dead processes, sum the rest.
exec {lock}>>"$ledger"
flock "$lock"
held=0
: >"$ledger.new"
while read -r j p m; do
    kill -0 "$p" 2>/dev/null || continue
    echo "$j $p $m" >>"$ledger.new"
    held=$((held + m))
done <"$ledger"
if [ $((held + peak)) -gt "$capacity" ]; then
    rm -f "$ledger.new"
    oom $((capacity - held)) "Its neighbours on $gpu hold $held MiB."
fi
echo "$job $$ $peak" >>"$ledger.new"
cat "$ledger.new" >"$ledger" # in place: the lock is on this file
rm -f "$ledger.new"
event start $((held + peak))
flock -u "$lock"

echo "fake-gpu: job $job holds $peak MiB on $gpu for $secs s"
XMEM_FAKE_NVML_MIB=$peak XMEM_FAKE_NVML_GPU=$index sleep "$secs"

flock "$lock"
grep -v "^$job $$ " "$ledger" >"$ledger.new"
cat "$ledger.new" >"$ledger"
rm -f "$ledger.new"
event end "$(awk '{s += $3} END {print s + 0}' "$ledger")"
flock -u "$lock"
