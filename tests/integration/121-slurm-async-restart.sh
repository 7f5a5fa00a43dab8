#!/usr/bin/env bash
# Nothing stays held (docs/async.md): after `kill -9` of xmemd with 5 jobs held for their
# estimates, the restarted xmemd finds them by the mark in their AdminComment and releases
# each; with xmemd left down, slurmctld's own timer (begin_time at the held deadline, 40 s
# here) releases them unchanged.
T_NAME=121-slurm-async-restart
. "$(dirname "$0")/lab/testlib.sh"
. "$(dirname "$0")/lab/async.bash"
t_require_async_lab

export XMEM_LAB_HELD_DEADLINE=40
lab_up shard
cd "$LAB/jobs" || fail "no $LAB/jobs"

# held_burst N FIRST_LIMIT: N held jobs whose profiles outlive the test's waits; ids in HELD.
held_burst() {
    local i
    HELD=()
    for ((i = 0; i < $1; i++)); do
        slow_script "slow-$2-$i.sbatch" $(($2 + i)) 120
        submit --xmem -o "$LAB/jobs/slow-$2-$i.out" "slow-$2-$i.sbatch"
        expect_held "$JOB" "job $JOB before xmemd is killed"
        HELD+=("$JOB")
    done
}

kill_xmemd() {
    local pid
    pid=$(cat "$LAB/run/xmemd.pid")
    kill -KILL "$pid" || fail "cannot kill xmemd"
    lab_wait_for 10 sh -c "! kill -0 $pid 2>/dev/null" || fail "xmemd survived kill -9"
}

# 1. kill -9, restart: every held job is released at once, keeping its request.
held_burst 5 3000
kill_xmemd
rm -f "$LAB/run/xmemd.sock"
lab_start_xmemd
released="xmem: released (xmemd restarted and has no estimate for this job; it keeps its original request)"
for job in "${HELD[@]}"; do
    wait_released "$job" 30 || fail "job $job is still held 30 s after xmemd restarted"
    expect_eq "$(admin_comment "$job")" "$released request=gres:gpu:1->shard:$LAB_SHARDS_PER_GPU" \
        "job $job's record after the restart"
    lab_wait_state "$job" 60 COMPLETED || fail "released job $job did not run"
done
expect_eq "$(cat "$LAB/jobs/slow-3000-"*.out | grep -c "^$released")" 5 "outputs saying why the job was released"
pass "after kill -9 and a restart, xmemd released the 5 held jobs with their requests; all ran"

# 2. kill -9, xmemd left down: the held deadline releases them, unchanged.
held_burst 3 3100
kill_xmemd
for job in "${HELD[@]}"; do
    lab_wait_state "$job" 120 RUNNING COMPLETED || fail "job $job still held after the 40 s deadline, xmemd down"
    expect_field "$job" TresPerNode "gres:shard:$LAB_SHARDS_PER_GPU" "job $job released by the deadline"
    lab_wait_state "$job" 60 COMPLETED || fail "job $job released by the deadline did not complete"
done
expect_eq "$(cat "$LAB/jobs/slow-3100-"*.out | grep -c "^xmem: released at the held deadline without an estimate")" 3 \
    "outputs saying the deadline released the job"
pass "with xmemd down, slurmctld released the held jobs at the deadline, unchanged"
finish
