#!/usr/bin/env bash
# The mps policy on an mps-configured cluster (22.05: never shard and mps on one node):
# --gres=gpu:1 becomes mps:N, the tasks see the MPS memory limit, srun outside a job gets
# the same share for its step, and two resized jobs run on one GPU at once.
T_NAME=53-slurm-mps
. "$(dirname "$0")/lab/testlib.sh"
t_require_lab
lab_up mps
J=$LAB/jobs
cd "$J" || fail "no $J"
expect_true "policy is not mps: $(cat "$LAB/etc/xmem_policy.lua")" \
    grep -q 'mode = "mps"' "$LAB/etc/xmem_policy.lua"

cat >"$J/mps.sbatch" <<'SCRIPT'
#!/bin/bash
#SBATCH --gres=gpu:1
#SBATCH --time=5
python3 -c 'print("training")'
printenv CUDA_MPS_PINNED_DEVICE_MEM_LIMIT CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
sleep "${HOLD_S:-0}"
SCRIPT

# 12 GiB + 10% = 13517 MiB of 40960 MiB → 34% of the GPU's MPS share; limit 12288M.
submit --xmem=12G -o "$J/%j.out" "$J/mps.sbatch"
expect_out "xmem: requesting mps:34 instead of one whole GPU" "cli_filter preview"
expect_field "$JOB" TresPerNode gres:mps:34 "mps policy"
expect_true "comment: $(lab_comment "$JOB")" grep -q "policy=mps request=gres:gpu:1->mps:34" <<<"$(lab_comment "$JOB")"
lab_wait_state "$JOB" 30 COMPLETED || fail "mps job did not complete"
expect_true "task lacks the MPS memory limit: $(cat "$J/$JOB.out")" grep -qx "0=12288M" "$J/$JOB.out"
expect_true "task lacks CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=34: $(cat "$J/$JOB.out")" \
    grep -qx "34" "$J/$JOB.out"
pass "--xmem=12G → mps:34; the task sees 0=12288M and 34% of the GPU"

run srun --gres=gpu:1 --xmem=4G printenv CUDA_MPS_PINNED_DEVICE_MEM_LIMIT CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
expect_rc 0 "srun --xmem=4G on mps"
expect_out "^0=4096M$" "srun limit"
expect_out "^12$" "srun share (4506 MiB of 40960 → 12%)"
pass "srun --gres=gpu:1 --xmem=4G outside a job: mps:12 with a 4096M limit"

# Two resized jobs at once on one GPU (the node has one core each for them).
export HOLD_S=6
submit --xmem=16G -o "$J/%j.out" "$J/mps.sbatch"
a=$JOB
submit --xmem=16G -o "$J/%j.out" "$J/mps.sbatch"
b=$JOB
lab_wait_state "$a" 20 RUNNING || fail "first job not running"
lab_wait_state "$b" 20 RUNNING || fail "second job not running while the first runs"
ga=$(gpu_of "$a")
gb=$(gpu_of "$b")
expect_true "the first job's GPU is not known" [ -n "$ga" ]
expect_eq "$gb" "$ga" "jobs not on the same GPU"
unset HOLD_S
pass "two mps:45 jobs run at once on the same GPU ($ga)"
finish
