#!/usr/bin/env bash
# Only root's words are believed (docs/enforcement.md "After an OOM"): a second user
# (xmemt1) who forges xmem's requeue mark in their job's Comment and requeues the job
# themselves does not lift its memory limit; cannot change the GPU request of their pending
# packed job (job_submit.lua's slurm_job_modify) nor its AdminComment; and their real OOM is
# still requeued once on a whole GPU, with the mark in the AdminComment, read back as them.
T_NAME=59-slurm-requeue-forged
. "$(dirname "$0")/lab/testlib.sh"
. "$(dirname "$0")/58-requeue-common.bash"
t_require_lab
[ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"
id xmemt1 >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin xmemt1 ||
    fail "cannot create the second user xmemt1"

requeue_lab_up
# The first run does what the third argument says; a rerun reports its limit and share.
job_script forged.sbatch 8004 "$(first_runs 1 'sleep 60; exit 0')"
job_script oom.sbatch 8005 "$(first_runs 1 "$OOM")"
job_script held.sbatch 8006 "$(first_runs 1 'exit 0')"
as_user() { submit_as xmemt1 "$@"; }
# user CMD...: runs CMD as xmemt1 (RUN_OUT, RUN_RC).
user() { run runuser -u xmemt1 -- env SLURM_CONF="$SLURM_CONF" "$@"; }

as_user timeout 60 sbatch --xmem -o "$J/forged.out" forged.sbatch
forged=$JOB
as_user timeout 60 sbatch --xmem -o "$J/oom.out" oom.sbatch
oom=$JOB
as_user timeout 60 sbatch --xmem --hold -o /dev/null held.sbatch
held=$JOB
expect_field "$forged" TresPerNode gres:shard:3 "forged job at submission"
expect_true "the packing record is not in the AdminComment: $(admin_comment "$forged")" \
    grep -q "^xmem: estimate=.* limit=8004M .*request=gres:gpu:1->shard:3$" <<<"$(admin_comment "$forged")"
pass "job_submit.lua wrote the packing record into the AdminComment"

# 1. A user cannot write the AdminComment, nor change a packed job's GPU request.
user scontrol update JobId="$held" AdminComment="xmem: requeued after CUDA OOM from=shard:3 limit=8006M to=shard:10 whole"
expect_true "xmemt1 set the AdminComment of job $held" [ "$RUN_RC" != 0 ]
user scontrol update JobId="$held" TresPerNode=gres:shard:1
expect_true "xmemt1 changed the GPU request of packed job $held" [ "$RUN_RC" != 0 ]
# 22.05's scontrol prints only the error code's text; the controller's log says why.
expect_out "Access/permission denied for job $held" "refusal"
grep -q "xmem: uid $(id -u xmemt1): job $held: change of tres_per_node to gres:shard:1 refused (packed by xmem)" \
    "$LAB/log/slurmctld.log" || fail "the controller's log does not say why the update was refused"
expect_field "$held" TresPerNode gres:shard:3 "packed job after the user's update"
run scontrol update JobId="$held" TresPerNode=gres:shard:4
expect_rc 0 "root's update of a packed job's share"
expect_field "$held" TresPerNode gres:shard:4 "packed job after root's update"
pass "xmemt1 cannot set the AdminComment nor change a packed job's share (access denied, the log says why); root can"
timeout 10 scancel "$held"

# 2. A mark forged in the Comment, then a requeue by the owner: the limit stays.
lab_wait_state "$forged" 30 RUNNING || fail "forged job did not start"
user scontrol update JobId="$forged" Comment="$(lab_comment "$forged"); xmem: requeued after CUDA OOM from=shard:3 limit=8004M to=shard:10 whole"
expect_rc 0 "the owner's update of their Comment (Slurm allows it)"
user scontrol requeue "$forged"
expect_rc 0 "the owner's requeue of their job"
lab_wait_for 30 sh -c "[ \"\$(scontrol show job -o $forged | grep -o 'Restarts=[0-9]*')\" = Restarts=1 ]" ||
    fail "job $forged was not requeued by its owner"
finished "$forged"
out=$(cat "$J/forged.out")
expect_true "the forged mark lifted the rerun's limit: $out" \
    grep -qx "run 1: limit=0=8004M shards=3" <<<"$out"
expect_false "the forged rerun got xmem's requeue line: $out" grep -q '^xmem: ' <<<"$out"
pass "a mark forged in the Comment + the owner's requeue: the rerun keeps its 8004 MiB limit on shard:3"

# 3. The owner's real OOM: requeued once, whole, read back from the AdminComment as xmemt1.
finished "$oom"
expect_field "$oom" JobState COMPLETED "the OOMed job after its rerun"
expect_field "$oom" Restarts 1 "the OOMed job"
out=$(cat "$J/oom.out")
expect_true "xmemt1's rerun not whole or still limited: $out" grep -qx "run 1: limit=none shards=10" <<<"$out"
expect_true "xmemt1's output lacks xmem's line: $out" \
    grep -q "^xmem: the first run on gres:shard:3 (limit 8005 MiB) ran out of GPU memory" <<<"$out"
expect_true "the mark is not in the AdminComment: $(admin_comment "$oom")" \
    grep -qE "; xmem: requeued after CUDA OOM from=shard:3 limit=8005M to=shard:10 whole(; xmem-acct: \{[^;]*\})?$" <<<"$(admin_comment "$oom")"
pass "xmemt1's real OOM was requeued once on shard:10 without a limit (mark in the AdminComment)"
finish
