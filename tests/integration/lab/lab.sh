#!/usr/bin/env bash
# lab.sh — a real one-node Slurm 22.05 cluster on localhost for xmem's tests and demo:
# munged, slurmctld, slurmd (two fake GPUs, shard or mps GRES) and xmemd, every file under
# one scratch directory, every daemon stopped by its own pid.
#
# Use it as a library (tests):   . lab.sh; lab_up shard; ...; lab_down
# or from a shell:               lab.sh up shard|mps [DIR]   /   lab.sh down DIR
#
# Environment: XMEM_BUILD (build tree with lib/xmem.so, bin/xmemd), XMEM_SRC (source tree),
# XMEM_LAB_KEEP=1 keeps the scratch directory after lab_down (for post-mortems),
# XMEM_LAB_PROFILER=real|fake (default: real xmem-estimate if it works, else the fake one),
# XMEM_PLUGSTACK_ARGS extra plugstack.conf arguments for xmem.so, XMEM_LAB_NO_XMEMD=1 starts
# no daemon (tests of the fallback path), XMEM_LAB_BUDGET=S sbatch's interactive budget (default
# 0: it waits for the estimate), XMEM_LAB_HELD_DEADLINE=S how long a job stays held for its
# estimate (docs/async.md), XMEM_LAB_INSTALLED=1 takes the plugin, the Lua,
# xmemd and the estimator from the Debian packages' places instead of the trees,
# XMEM_LAB_ACCOUNTING=1 adds slurmdbd over a private MariaDB (dbd.sh; off by default: slower).
# XMEM_LAB_CLUSTER=1 makes it a small cluster of network namespaces (lab/cluster.sh: nodes
# cpu1, gpu1, gpu2; partitions cpu and debug), XMEM_LAB_YAML extra lines for xmem.yaml,
# XMEM_LAB_ESTIMATOR_ARGS more arguments for the real estimator ("--mode, exact"),
# XMEM_LAB_CPUS=N makes each node claim N cores (SlurmdParameters=config_overrides): a job
# takes a core, so a two-core machine would run two jobs per node however small their GPU
# shares (the packing bench and test 124 claim 32). The fake GPUs' memory: lab/fake-gpu.sh,
# its ledgers under $LAB/gpu.
# Only one lab runs at a time on a machine (fixed ports): lab_up takes a flock.

LAB_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Its failures (lab_die) are the tests' failures: the daemons' log tails follow (log_watch).
. "$LAB_HERE/../lib/assert.bash"
. "$LAB_HERE/dbd.sh"
. "$LAB_HERE/cluster.sh"
: "${XMEM_SRC:=$(cd "$LAB_HERE/../../.." && pwd)}"
: "${XMEM_BUILD:=$XMEM_SRC/build}"
# Where the lab takes xmem from: the build tree and the source tree's Lua, or the files the
# Debian packages install (debian/*.install; the package test, 09-package-install.sh).
if [ "${XMEM_LAB_INSTALLED:-0}" = 1 ]; then
    LAB_LIBDIR=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
    LAB_PLUGIN=$LAB_LIBDIR/slurm/xmem.so LAB_CAPTURE_LIB=$LAB_LIBDIR/xmem/libxmem-capture.so
    LAB_XMEMD_BIN=/usr/sbin/xmemd LAB_LIBEXEC=/usr/libexec/xmem LAB_LUA=/usr/share/xmem/slurm
else
    LAB_PLUGIN=$XMEM_BUILD/lib/xmem.so LAB_CAPTURE_LIB=$XMEM_BUILD/lib/libxmem-capture.so
    LAB_XMEMD_BIN=$XMEM_BUILD/bin/xmemd LAB_LIBEXEC=$XMEM_BUILD/bin LAB_LUA=$XMEM_SRC/etc
fi
# XMEM_LAB_PORT_BASE moves the ports (and the lock) for a second lab on one machine.
LAB_CTLD_PORT=${XMEM_LAB_PORT_BASE:-16817}
LAB_SLURMD_PORT=$((LAB_CTLD_PORT + 1))
LAB_LOCK=/tmp/xmem-slurm-lab${XMEM_LAB_PORT_BASE:+-$XMEM_LAB_PORT_BASE}.lock
LAB_GPUS=2
LAB_SHARDS_PER_GPU=10
LAB_MPS_PER_GPU=100
LAB_GPU_MB=40960
# LAB_GPU_TYPE (unset by default): a type for the lab's GPUs (gres.conf Type=, the node's
# Gres=gpu:TYPE:N), for tests of typed requests such as --gres=gpu:a100:1.

lab_log() { echo "lab: $*" >&2; }

lab_die() { fail "lab: $*"; }

# Waits up to $1 seconds for the command in "$@" to succeed.
lab_wait_for() {
    local secs=$1 i
    shift
    for ((i = 0; i < secs * 5; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}

lab_pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Renders a template: @KEY@ → value for every KEY=value argument.
lab_render() {
    local in=$1 out=$2 kv sedargs=()
    shift 2
    for kv in "$@"; do sedargs+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
    sed "${sedargs[@]}" "$in" >"$out"
}

lab_write_gres() {
    local kind=$1 i
    {
        echo "# xmem lab: $LAB_GPUS fake GPUs (character devices 195,N), $kind sharing"
        echo "AutoDetect=off"
        for ((i = 0; i < LAB_GPUS; i++)); do
            echo "Name=gpu ${LAB_GPU_TYPE:+Type=$LAB_GPU_TYPE }File=$LAB/dev/nvidia$i"
            if [ "$kind" = shard ]; then
                echo "Name=shard Count=$LAB_SHARDS_PER_GPU File=$LAB/dev/nvidia$i"
            else
                echo "Name=mps Count=$LAB_MPS_PER_GPU File=$LAB/dev/nvidia$i"
            fi
        done
    } >"$LAB/etc/gres.conf"
}

# The policy the controller's Lua reads; rendered by xmemd when it can, else from the
# template that mirrors xmemd's output for the lab's xmem.yaml.
lab_write_policy() {
    local kind=$1
    if [ -x "$LAB_XMEMD_BIN" ] &&
        timeout 10 "$LAB_XMEMD_BIN" --config "$LAB/etc/xmem.yaml" \
            --render-policy "$LAB/etc/xmem_policy.lua" >"$LAB/log/render-policy.out" 2>&1; then
        return 0
    fi
    lab_log "xmemd --render-policy unavailable; writing the lab policy from its template"
    lab_render "$LAB_HERE/xmem_policy.lua.in" "$LAB/etc/xmem_policy.lua" \
        MODE="$kind" GPU_MB=$LAB_GPU_MB SHARDS=$LAB_SHARDS_PER_GPU MPS=$LAB_MPS_PER_GPU \
        HELD_DEADLINE="${XMEM_LAB_HELD_DEADLINE:-1800}"
}

# Puts a python3 that imports torch (Debian's, on a Debian machine) first in PATH: jobs and
# xmemd resolve python3 through PATH.
lab_prefer_torch_python() {
    local py
    for py in /usr/bin/python3 "$(command -v python3)"; do
        if [ -x "$py" ] && timeout 60 "$py" -c 'import torch' >/dev/null 2>&1; then
            PATH="$(dirname "$py"):$PATH"
            export PATH
            return 0
        fi
    done
    return 1
}

# The real estimator needs its profiler, the capture library and a python3 with torch.
lab_real_profiler_ok() {
    [ -x "$LAB_LIBEXEC/xmem-estimate" ] && [ -x "$LAB_LIBEXEC/xmem-profile" ] &&
        [ -f "$LAB_CAPTURE_LIB" ] &&
        timeout 60 python3 -c 'import torch' >/dev/null 2>&1
}

# Chooses the profiler xmemd runs: the real xmem-estimate when it is built and answers,
# else the lab's deterministic fake (size from XMEM_FAKE_LIMIT_MB / XMEM_FAKE_PEAK_MB).
lab_profiler() {
    local want=${XMEM_LAB_PROFILER:-auto}
    if [ "$want" != fake ] && lab_real_profiler_ok; then
        echo "$LAB_LIBEXEC/xmem-estimate, --json${XMEM_LAB_ESTIMATOR_ARGS:+, $XMEM_LAB_ESTIMATOR_ARGS}"
        return 0
    fi
    [ "$want" = real ] && lab_log "real xmem-estimate not available; using the fake profiler"
    echo "$LAB_HERE/fake-profiler.sh"
}

lab_start_munged() {
    install -d -o munge -g munge -m 0755 "$LAB/munge"
    runuser -u munge -- /usr/sbin/munged --socket="$LAB/munge/munge.socket" \
        --key-file=/etc/munge/munge.key --log-file="$LAB/munge/munged.log" \
        --pid-file="$LAB/munge/munged.pid" --seed-file="$LAB/munge/munged.seed" {LAB_LOCK_FD}>&- ||
        lab_die "munged did not start"
    lab_wait_for 10 test -S "$LAB/munge/munge.socket" || lab_die "munged socket missing"
}

lab_start_xmemd() {
    LAB_XMEMD=0
    [ "${XMEM_LAB_NO_XMEMD:-0}" = 1 ] && return 0
    [ -x "$LAB_XMEMD_BIN" ] || {
        lab_log "no $LAB_XMEMD_BIN: the cluster runs without a daemon"
        return 0
    }
    # Started from a subshell, so it is no child of the caller (whose `wait` must not wait
    # for it) and is stopped by its pid file only.
    (
        setsid "$LAB_XMEMD_BIN" --foreground --config "$LAB/etc/xmem.yaml" \
            >>"$LAB/log/xmemd.log" 2>&1 </dev/null {LAB_LOCK_FD}>&- &
        echo $! >"$LAB/run/xmemd.pid"
    )
    lab_wait_for 15 test -S "$LAB/run/xmemd.sock" || lab_die "xmemd did not create its socket"
    LAB_XMEMD=1
}

lab_node_ready() {
    [ -e "$LAB/run/cluster" ] && { lab_pid_alive "$LAB/run/slurmctld.pid" && cluster_ready; return; }
    lab_pid_alive "$LAB/run/slurmctld.pid" && lab_pid_alive "$LAB/run/slurmd.pid" &&
        timeout 5 sinfo -h -N -o %T 2>/dev/null | grep -qx idle
}

# lab_up shard|mps: brings the cluster up; sets LAB, SLURM_CONF; exports what clients need.
lab_up() {
    local kind=${1:-shard} host node_line gres_types node_gres i
    case $kind in shard | mps) ;; *) lab_die "lab_up: unknown kind '$kind' (shard or mps)" ;; esac
    [ "$(id -u)" = 0 ] || { echo "lab needs root (munged, slurmd)"; return 77; }
    exec {LAB_LOCK_FD}>"$LAB_LOCK"
    flock -w 900 "$LAB_LOCK_FD" || lab_die "another xmem lab holds $LAB_LOCK"
    LAB=${LAB:-$(mktemp -d /tmp/xmem-lab.XXXXXX)}
    # slurmctld's, slurmd's and xmemd's logs, and munged's: what a failing test shows.
    log_watch "$LAB/log/*.log" "$LAB/munge/munged.log"
    mkdir -p "$LAB" && chmod 0755 "$LAB"
    mkdir -p "$LAB"/{etc,state,spool,run,log,dev,lib,fake,jobs,gpu}
    chmod 1777 "$LAB/jobs" "$LAB/fake" "$LAB/gpu"
    echo "$LAB_GPU_MB" >"$LAB/gpu/capacity_mib" # lab/fake-gpu.sh's GPU memory
    LAB_KIND=$kind
    host=$(hostname -s)
    node_line=$(slurmd -C | head -n 1 | sed -e 's/^NodeName=//' -e 's/RealMemory=[0-9]*/RealMemory=2048/')
    [ -z "${XMEM_LAB_CPUS:-}" ] || node_line="${node_line%% *} CPUs=$XMEM_LAB_CPUS Boards=1 SocketsPerBoard=1 CoresPerSocket=$XMEM_LAB_CPUS ThreadsPerCore=1 RealMemory=2048"
    for ((i = 0; i < LAB_GPUS; i++)); do mknod "$LAB/dev/nvidia$i" c 195 "$i"; done
    if [ "$kind" = shard ]; then
        gres_types=gpu,shard node_gres=gpu:${LAB_GPU_TYPE:+$LAB_GPU_TYPE:}$LAB_GPUS,shard:$((LAB_GPUS * LAB_SHARDS_PER_GPU))
    else
        gres_types=gpu,mps node_gres=gpu:${LAB_GPU_TYPE:+$LAB_GPU_TYPE:}$LAB_GPUS,mps:$((LAB_GPUS * LAB_MPS_PER_GPU))
    fi
    lab_render "$LAB_HERE/slurm.conf.in" "$LAB/etc/slurm.conf" LAB="$LAB" HOST="$host" \
        CTLD_PORT=$LAB_CTLD_PORT SLURMD_PORT=$LAB_SLURMD_PORT GRES_TYPES=$gres_types \
        NODE_LINE="$node_line" NODE_GRES="$node_gres"
    [ -z "${XMEM_LAB_CPUS:-}" ] || echo "SlurmdParameters=config_overrides" >>"$LAB/etc/slurm.conf"
    lab_write_gres "$kind"
    lab_write_accounting
    lab_render "$LAB_HERE/xmem.yaml.in" "$LAB/etc/xmem.yaml" LAB="$LAB" MODE="$kind" \
        PROFILER="$(lab_profiler)" GPU_GB=$((LAB_GPU_MB / 1024)) SHARDS=$LAB_SHARDS_PER_GPU MPS=$LAB_MPS_PER_GPU \
        BUDGET="${XMEM_LAB_BUDGET:-0}" HELD_DEADLINE="${XMEM_LAB_HELD_DEADLINE:-1800}"
    [ -z "${XMEM_LAB_YAML:-}" ] || printf '%s\n' "$XMEM_LAB_YAML" >>"$LAB/etc/xmem.yaml"
    if [ "${XMEM_LAB_CLUSTER:-0}" = 1 ]; then
        cluster_conf "${node_line#* }" "$node_gres"
        cluster_net_up
    fi
    lab_write_policy "$kind"
    # A fresh copy, never overwritten in place: daemons that map the .so crash otherwise.
    if [ -f "$LAB_PLUGIN" ]; then
        cp "$LAB_PLUGIN" "$LAB/lib/xmem.so"
    else
        lab_die "no $LAB_PLUGIN: build first (make BUILD=...)"
    fi
    echo "required $LAB/lib/xmem.so socket=$LAB/run/xmemd.sock timeout=${XMEM_LAB_TIMEOUT:-20} ${XMEM_PLUGSTACK_ARGS:-}" \
        >"$LAB/etc/plugstack.conf"
    cp "$LAB_LUA/job_submit.lua" "$LAB_LUA/cli_filter.lua" "$LAB_LUA/xmem_lib.lua" "$LAB/etc/"
    chmod -R a+rX "$LAB/etc" "$LAB/lib"
    export SLURM_CONF="$LAB/etc/slurm.conf"
    lab_start_munged
    lab_start_dbd
    lab_start_xmemd
    # The controller's Lua verifies decisions with unmunge against the lab's munged.
    # Daemons must not inherit the lab lock: it is released when this shell ends.
    XMEM_MUNGE_SOCKET="$LAB/munge/munge.socket" slurmctld -i -f "$SLURM_CONF" {LAB_LOCK_FD}>&- ||
        lab_die "slurmctld did not start"
    if [ "${XMEM_LAB_CLUSTER:-0}" = 1 ]; then
        cluster_start_slurmds
    else
        slurmd -f "$SLURM_CONF" {LAB_LOCK_FD}>&- || lab_die "slurmd did not start"
    fi
    lab_wait_for 30 lab_node_ready || lab_die "node did not become idle within 30 s"
    lab_log "up: $kind cluster in $LAB (xmemd: $([ "$LAB_XMEMD" = 1 ] && echo yes || echo no))"
}

# Sends SIGTERM to the pid in $1, waits up to 10 s, then SIGKILL.
lab_stop_pidfile() {
    local pidfile=$1 pid i
    [ -s "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    kill -0 "$pid" 2>/dev/null || return 0
    kill -CONT "$pid" 2>/dev/null
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.2
    done
    lab_log "$pidfile: pid $pid ignored SIGTERM; killing it"
    kill -KILL "$pid" 2>/dev/null
}

# slurmstepd processes of this lab: they inherit SLURM_CONF from slurmd.
lab_stepd_pids() {
    local p
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/exe" 2>/dev/null)" = /usr/sbin/slurmstepd ] || continue
        tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "SLURM_CONF=$LAB/etc/slurm.conf" &&
            echo "${p#/proc/}"
    done
}

lab_down() {
    local p
    [ -n "${LAB:-}" ] && [ -d "$LAB" ] || return 0
    if lab_pid_alive "$LAB/run/slurmctld.pid"; then
        timeout 10 scancel --full -u root >/dev/null 2>&1
        timeout 10 squeue -h -o %i 2>/dev/null | xargs -r timeout 10 scancel >/dev/null 2>&1
        lab_wait_for 10 sh -c "[ -z \"\$(timeout 5 squeue -h -t R,CG -o %i)\" ]"
    fi
    lab_stop_pidfile "$LAB/run/slurmd.pid"
    cluster_stop_slurmds
    for p in $(lab_stepd_pids); do kill -KILL "$p" 2>/dev/null; done
    lab_stop_pidfile "$LAB/run/slurmctld.pid"
    lab_stop_dbd
    lab_stop_pidfile "$LAB/run/xmemd.pid"
    lab_stop_pidfile "$LAB/munge/munged.pid"
    [ -e "$LAB/run/cluster" ] && cluster_net_down
    if [ "${XMEM_LAB_KEEP:-0}" = 1 ]; then
        lab_log "kept $LAB"
    else
        rm -rf "$LAB"
    fi
    [ -n "${LAB_LOCK_FD:-}" ] && exec {LAB_LOCK_FD}>&-
    LAB=
}

# ---- helpers for tests -------------------------------------------------------------------

# lab_field JOBID NAME: one field of `scontrol show job` (e.g. TresPerNode, JobState).
lab_field() {
    timeout 10 scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# lab_wait_state JOBID SECS STATE...: waits until the job reaches one of the states.
lab_wait_state() {
    local job=$1 secs=$2 i st
    shift 2
    for ((i = 0; i < secs * 5; i++)); do
        st=$(lab_field "$job" JobState)
        for s in "$@"; do [ "$st" = "$s" ] && return 0; done
        sleep 0.2
    done
    echo "lab: job $job still ${st:-unknown} after ${secs}s (wanted $*)" >&2
    return 1
}

# lab_jobid OUTPUT: the job id from sbatch's "Submitted batch job N" line.
lab_jobid() { sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"$1" | tail -n 1; }

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -u
    case ${1:-} in
    up)
        LAB=${3:-}
        lab_up "${2:-shard}"
        echo "export SLURM_CONF=$LAB/etc/slurm.conf  # lab.sh down $LAB"
        # The lock is held by this process; hand it over by leaving the lab running.
        ;;
    down)
        LAB=${2:?usage: lab.sh down DIR}
        export SLURM_CONF=$LAB/etc/slurm.conf
        lab_down
        ;;
    *) echo "usage: lab.sh up shard|mps [DIR] | lab.sh down DIR" >&2; exit 2 ;;
    esac
fi
