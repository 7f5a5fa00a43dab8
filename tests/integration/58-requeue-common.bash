# 58-requeue-common.bash — what the requeue tests (58, 59; 106's requeued job) share: a shard lab with the fake
# profiler whose slurmctld starts a requeued job again after 6 s, its jobs directory with a
# train.py the fake profiler sizes, and their helpers. Source it after testlib.sh.

# requeue_fast_restart: restarts the lab's slurmctld so that a requeued job starts again
# after 6 s. Slurm holds a requeued job back for the credential lifetime plus one second
# (AuthInfo cred_expire, 120 s by default); slurmctld reads it at start only.
requeue_fast_restart() {
    sed -i 's|^AuthInfo=.*|&,cred_expire=5|' "$LAB/etc/slurm.conf"
    lab_stop_pidfile "$LAB/run/slurmctld.pid"
    XMEM_MUNGE_SOCKET="$LAB/munge/munge.socket" slurmctld -f "$SLURM_CONF" {LAB_LOCK_FD}>&- ||
        fail "slurmctld did not restart"
    lab_wait_for 30 lab_node_ready || fail "node not idle after the slurmctld restart"
}

# requeue_lab_up [shard|mps]: the lab up (shard by default), J its jobs directory (the
# current directory).
requeue_lab_up() {
    XMEM_LAB_PROFILER=fake lab_up "${1:-shard}"
    expect_true "xmemd did not start" [ "$LAB_XMEMD" = 1 ]
    requeue_fast_restart
    J=$LAB/jobs
    cd "$J" || fail "no $J"
    echo 'print("training")' >train.py
}

# The job's AdminComment, where xmem keeps its records (root's; docs/enforcement.md).
admin_comment() { timeout 10 scontrol show job "$1" | sed -n 's/^ *AdminComment=\(.*[^ ]\) *$/\1/p'; }
# first_runs N FIRST: a job body (for job_script): runs before the Nth restart
# (SLURM_RESTART_COUNT < N) do FIRST; every run that gets past it reports its restart count,
# memory limit and share and succeeds.
first_runs() {
    printf 'if [ "${SLURM_RESTART_COUNT:-0}" -lt %s ]; then %s; fi\n%s' "$1" "$2" \
        'echo "run ${SLURM_RESTART_COUNT:-0}: limit=${CUDA_MPS_PINNED_DEVICE_MEM_LIMIT:-none} shards=${SLURM_SHARDS_ON_NODE:-none}"'
}
OOM='echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2; exit 1'
finished() { lab_wait_state "$1" 60 COMPLETED FAILED || fail "job $1 did not finish"; }
