#!/usr/bin/env bash
# A whole GPU where the site packs (docs/enforcement.md, "Whole GPUs in a partition that
# packs"): Slurm 22.05 places a gres/gpu job on a GPU whose shards other jobs hold, so a job
# that keeps one whole GPU (here: plain --gres=gpu:1, no --xmem) is queued as every share of
# one GPU (shard:10) and Slurm's share count keeps it off the packed GPU. On the lab's fake
# GPUs (lab/fake-gpu.sh), which enforce their capacity: two packed jobs (shard:2, 6500 MiB
# each) run on one GPU; the whole job, 38000 MiB, must run alone on the other and complete.
# Without job_submit.lua's rule it ran beside them and ran out of memory (lost: a whole
# job's OOM is not requeued). Then what the node gives it: the whole GPU, no limit, the GPU
# variables a gpu:1 job gets (compared with one, the rule turned off); srun and salloc.
T_NAME=125-slurm-whole-shares
. "$(dirname "$0")/lab/testlib.sh"
. "$(dirname "$0")/58-requeue-common.bash"
. "$(dirname "$0")/lab/packing.bash"
t_require_lab
[ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"

XMEM_LAB_CPUS=32 requeue_lab_up shard
packing_train_py "$J"
node=$(packing_node)
[ -n "$node" ] || fail "no node in partition debug"
EVENTS=$LAB/gpu/events

# whole_script FILE ENV_OUT: a plain --gres=gpu:1 job that writes its GPU environment and
# holds 38000 MiB for 3 s.
whole_script() {
    printf '#!/bin/bash\n#SBATCH --gres=gpu:1\n%s >%s\npython3 train.py --true-peak-mb=38000 --seconds=3 --gpu-dir=%s\n' \
        "env | grep -E '^(CUDA_|GPU_DEVICE_ORDINAL|SLURM_JOB_GPUS|SLURM_GPUS|SLURM_SHARDS|ROCR_|XMEM_ENFORCE)' | sort" \
        "$2" "$LAB/gpu" >"$1"
}
packing_script "$J/packed.sbatch" 7000 6500 25
whole_script "$J/whole.sbatch" "$J/whole.env"

packed=()
for i in 1 2; do
    submit --xmem -w "$node" -o "$J/packed$i.out" "$J/packed.sbatch"
    packed+=("$JOB")
done
lab_wait_for 60 sh -c "[ \$(grep -c ' start ' '$EVENTS' 2>/dev/null) -ge 2 ]" ||
    fail "the two packed jobs did not start: $(cat "$EVENTS" 2>/dev/null)"
packed_gpu=$(awk '$3 == "start" {print $2}' "$EVENTS" | sort -u)
expect_eq "$(wc -w <<<"$packed_gpu")" 1 "GPUs the two packed jobs hold"

submit -w "$node" -o "$J/whole.out" "$J/whole.sbatch"
whole=$JOB
expect_field "$whole" TresPerNode gres:shard:10 "a plain gpu:1 job where the site packs"
expect_eq "$(admin_comment "$whole")" \
    "xmem: whole GPU request=gres:gpu:1 queued as shard:10 (every share of one GPU: no packed job beside it)" \
    "root's record of the whole job"
expect_eq "$(lab_comment "$whole")" "$(admin_comment "$whole")" "the user's Comment"
pass "a plain --gres=gpu:1 job is queued as shard:10, and its record says so"

for job in "${packed[@]}" "$whole"; do
    lab_wait_state "$job" 90 COMPLETED FAILED CANCELLED || fail "job $job did not end"
    expect_field "$job" JobState COMPLETED "job $job"
done
expect_eq "$(awk '$3 == "oom"' "$EVENTS")" "" "out-of-memory events"
# Where the whole job ran, and what the GPU held with it: 38000 MiB, its own alone.
expect_eq "$(awk -v j="$whole" '$3 == "start" && $4 == j {print $7, $8}' "$EVENTS")" "38000 shard:10" \
    "the whole job's start: MiB held on its GPU, its share"
whole_gpu=$(awk -v j="$whole" '$3 == "start" && $4 == j {print $2}' "$EVENTS")
expect_true "the whole job ran on $whole_gpu, the packed GPU is $packed_gpu" [ "$whole_gpu" != "$packed_gpu" ]
pass "the whole job ran alone on the other GPU while the two packed jobs held theirs; none ran out of memory"

# The node's side: no limit (no packing record: remote.c and remote_enforce.c leave it), and
# the GPU a gpu:1 job is given, by the same variable CUDA reads.
env_of() { sed -n "s/^$1=//p" "$2"; }
expect_eq "$(env_of CUDA_MPS_PINNED_DEVICE_MEM_LIMIT "$J/whole.env")" "" "the whole job's memory limit"
expect_eq "$(env_of SLURM_SHARDS_ON_NODE "$J/whole.env")" 10 "the whole job's shards"
index=$(env_of CUDA_VISIBLE_DEVICES "$J/whole.env")
expect_eq "$node.nvidia$index" "$whole_gpu" "CUDA_VISIBLE_DEVICES names the GPU it ran on"
# srun and salloc outside a job: the allocation is every share of one GPU, and srun's own
# step (cli_filter.lua), or a step inside it, asks for the same, so they run.
run srun --gres=gpu:1 sh -c 'echo "shards=${SLURM_SHARDS_ON_NODE:-none} limit=${CUDA_MPS_PINNED_DEVICE_MEM_LIMIT:-none}"'
expect_rc 0 "srun --gres=gpu:1 outside a job"
expect_out "^shards=$LAB_SHARDS_PER_GPU limit=none$" "srun's step"
run salloc --gres=gpu:1 srun --gres=gpu:1 sh -c 'echo "shards=${SLURM_SHARDS_ON_NODE:-none}"'
expect_rc 0 "salloc --gres=gpu:1 with an srun --gres=gpu:1 step"
expect_out "^shards=$LAB_SHARDS_PER_GPU$" "salloc's step"
pass "srun and salloc --gres=gpu:1 outside a job run on every share of one GPU"
sed -i -e 's/^\(  default: {.*\)}$/\1, whole_as_shares: false}/' -e 's/^\(    debug: {.*\)}$/\1, whole_as_shares: false}/' "$LAB/etc/xmem.yaml"
lab_write_policy shard
[ "$(grep -c "whole_as_shares = false" "$LAB/etc/xmem_policy.lua")" = 2 ] || fail "the policy was not re-rendered: $(cat "$LAB/etc/xmem_policy.lua")"
packing_reset
whole_script "$J/plain.sbatch" "$J/plain.env"
submit -w "$node" -o "$J/plain.out" "$J/plain.sbatch"
expect_field "$JOB" TresPerNode gres:gpu:1 "whole_as_shares: false"
lab_wait_state "$JOB" 60 COMPLETED FAILED || fail "job $JOB did not end"
expect_field "$JOB" JobState COMPLETED "the gpu:1 job"
echo "GPU environment of the whole-as-shares job:" >&2; cat "$J/whole.env" >&2
echo "GPU environment of a gpu:1 job:" >&2; cat "$J/plain.env" >&2
expect_true "a gpu:1 job's CUDA_VISIBLE_DEVICES: $(cat "$J/plain.env")" grep -qx "CUDA_VISIBLE_DEVICES=[01]" "$J/plain.env"
expect_eq "$(env_of CUDA_MPS_PINNED_DEVICE_MEM_LIMIT "$J/plain.env")" "" "a gpu:1 job's limit"
# Slurm 22.05 gives a shard job the GPU variables of a gpu:1 job (CUDA_VISIBLE_DEVICES,
# GPU_DEVICE_ORDINAL, SLURM_JOB_GPUS, SLURM_GPUS_ON_NODE, ...) and SLURM_SHARDS_ON_NODE.
names() { sed 's/=.*//' "$1" | grep -vx SLURM_SHARDS_ON_NODE | tr '\n' ' '; }
expect_eq "$(names "$J/whole.env")" "$(names "$J/plain.env")" "GPU variables of the whole-as-shares job (less SLURM_SHARDS_ON_NODE) against a gpu:1 job's"
pass "the whole job gets no limit and a gpu:1 job's GPU variables; whole_as_shares: false keeps gpu:1"
finish
