#!/usr/bin/env bash
# Asynchronous estimates under the mps policy (docs/async.md): a held job is queued as
# mps:100, a whole GPU's MPS share, and xmemd's decision narrows it to the estimate's
# percentage; its output names the share.
T_NAME=123-slurm-async-mps
. "$(dirname "$0")/lab/testlib.sh"
. "$(dirname "$0")/lab/async.bash"
t_require_async_lab

lab_up mps
cd "$LAB/jobs" || fail "no $LAB/jobs"
slow_script m.sbatch 8192 8
submit --xmem -o "$LAB/jobs/m.out" m.sbatch
expect_out "the job is held until its estimate is ready" "sbatch"
expect_field "$JOB" TresPerNode "gres:mps:$LAB_MPS_PER_GPU" "held job"
expect_field "$JOB" Reason BeginTime "held job"
lab_wait_state "$JOB" 90 COMPLETED || fail "job $JOB did not complete"
# limit 8192 MiB + 10 % = 9012 MiB of the A100-40GB's 40536 MiB: 23 %
expect_field "$JOB" TresPerNode gres:mps:23 "narrowed job"
expect_eq "$(admin_comment "$JOB")" "xmem: estimate=7372M limit=8192M policy=mps request=gres:gpu:1->mps:23" "packing record"
expect_true "the output does not name the share: $(cat "$LAB/jobs/m.out")" grep -qx "$(admin_comment "$JOB")" "$LAB/jobs/m.out"
pass "an mps job is held as mps:$LAB_MPS_PER_GPU and narrowed to mps:23"
finish
