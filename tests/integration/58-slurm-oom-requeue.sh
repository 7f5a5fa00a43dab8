#!/usr/bin/env bash
# After a CUDA OOM on a share (docs/enforcement.md "After an OOM"): a packed batch job whose
# first run prints a CUDA out-of-memory error is requeued once by slurmstepd (plugstack
# oom_requeue=), keeps its job id and priority, reruns on a whole GPU (every shard of one
# GPU: Slurm 22.05 cannot turn a shard job into a gpu one) without the first run's memory
# limit, completes, and its output has xmem's line. A job that OOMs on a whole GPU is not
# requeued; a rerun that OOMs again is not requeued again; factor:2 reruns on twice the
# share with twice the limit; oom_requeue=off leaves the job failed.
T_NAME=58-slurm-oom-requeue
. "$(dirname "$0")/lab/testlib.sh"
. "$(dirname "$0")/58-requeue-common.bash"
t_require_lab
[ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"

requeue_lab_up
# Each job OOMs while SLURM_RESTART_COUNT < the number given, then reports its limit and share.
job_script packed.sbatch 8000 "$(first_runs 1 "$OOM")"    # shard:3, OOM on the first run only
job_script again.sbatch 8001 "$(first_runs 2 "$OOM")"     # OOM on both runs
job_script whole.sbatch 38000 "$(first_runs 1 "$OOM")"    # above 90 % of the GPU: whole, as shard:10

# submit_job NAME: JOB and its first-run priority.
submit_job() {
    submit --xmem -o "$J/$1.out" "$J/$1.sbatch"
    PRIO=$(lab_field "$JOB" Priority)
}
XMEM_LINE='^xmem: the first run on gres:shard:3 \(limit 8000 MiB\) ran out of GPU memory; xmem requeued the job once with a whole GPU \(gres:shard:10: all of one GPU, no memory limit\)$'

# The first three run side by side: packed, OOM once; packed, OOM twice; too big to pack.
submit_job packed
packed=$JOB packed_prio=$PRIO
expect_field "$packed" TresPerNode gres:shard:3 "packed job at submission"
submit_job again
again=$JOB
submit_job whole
whole=$JOB
# Kept whole, queued as every share of one GPU (docs/enforcement.md): on a share, not packed.
expect_field "$whole" TresPerNode "$(lab_whole_gres)" "job too big to pack"

# 1. Packed, OOM once: requeued on every shard of one GPU, no limit, completes.
finished "$packed"
expect_field "$packed" JobId "$packed" "same job"
expect_field "$packed" JobState COMPLETED "packed job after its rerun"
expect_field "$packed" Restarts 1 "packed job"
expect_field "$packed" TresPerNode gres:shard:10 "rerun's share"
expect_field "$packed" Priority "$packed_prio" "rerun's priority"
out=$(cat "$J/packed.out")
expect_true "packed output lacks xmem's line: $out" grep -qE "$XMEM_LINE" <<<"$out"
expect_true "rerun not whole or still limited: $out" grep -qx "run 1: limit=none shards=10" <<<"$out"
expect_true "not exactly one xmem line: $out" [ "$(grep -c '^xmem: ' <<<"$out")" = 1 ]
expect_true "AdminComment lacks the mark: $(admin_comment "$packed")" \
    grep -q "xmem: requeued after CUDA OOM from=shard:3 limit=8000M to=shard:10 whole" <<<"$(admin_comment "$packed")"
# Issue 26, M8: the node held only the first run to the limit. SLURM_RESTART_COUNT is not in
# task_post_fork's environment, so the rerun is told by slurmctld's restart count.
held=$(grep -c "xmem: job $packed: GPU memory limit .* enforced by" "$LAB/log/slurmd.log")
expect_true "the node held job $packed to a limit $held times, not once (the rerun is whole): $(grep "xmem: job $packed:" "$LAB/log/slurmd.log")" \
    [ "$held" = 1 ]
pass "packed job $packed OOMed on shard:3, was requeued once (same id, priority $packed_prio), reran on shard:10 without a limit and completed; its output says so"

# 2. OOM on the rerun too: not requeued a second time.
finished "$again"
expect_field "$again" JobState FAILED "job that OOMs twice"
expect_field "$again" Restarts 1 "job that OOMs twice"
expect_true "slurmd log lacks why job $again was not requeued again" \
    grep -q "job $again ran out of GPU memory, not requeued: already requeued once" "$LAB/log/slurmd.log"
pass "a rerun that OOMs again is not requeued again"

# 3. OOM on a whole GPU: nothing to requeue.
finished "$whole"
expect_field "$whole" JobState FAILED "whole job that OOMs"
expect_field "$whole" Restarts 0 "whole job that OOMs"
pass "a job that OOMs on a whole GPU is not requeued"

# plugstack.conf is read by each new slurmstepd: the next jobs see the new option.
set_option() { sed -i "s| oom_requeue=[^ ]*||; s|\$| oom_requeue=$1|" "$LAB/etc/plugstack.conf"; }

# 4. factor:2: twice the share and twice the limit.
set_option factor:2
job_script factor.sbatch 8002 "$(first_runs 1 "$OOM")"
submit_job factor
factor=$JOB
finished "$factor"
expect_field "$factor" JobState COMPLETED "factor job"
expect_field "$factor" TresPerNode gres:shard:6 "factor rerun's share"
out=$(cat "$J/factor.out")
expect_true "factor output lacks xmem's line: $out" \
    grep -q "ran out of GPU memory; xmem requeued the job once on gres:shard:6 (limit 16004 MiB)" <<<"$out"
expect_true "factor rerun's limit: $out" grep -qx "run 1: limit=0=16004M shards=6" <<<"$out"
pass "factor:2 reran on shard:6 with a 16004 MiB limit"

# 5. off: the OOM stays a failure.
set_option off
job_script off.sbatch 8003 "$(first_runs 1 "$OOM")"
submit_job off
off=$JOB
finished "$off"
expect_field "$off" JobState FAILED "oom_requeue=off"
expect_field "$off" Restarts 0 "oom_requeue=off"
pass "oom_requeue=off leaves the OOM failed"
finish
