#!/usr/bin/env bash
# sbatch/salloc/srun --xmem on a real one-node Slurm (shard GRES), without relying on xmemd:
# option values, #SBATCH --xmem, --wrap, salloc, srun outside and inside a job, the
# controller's policy (shard count, cap, whole GPU), multi-GPU requests, no leaks into the
# job or nested sbatch, and "never lose a job" when the daemon is not running.
T_NAME=50-slurm-submit
. "$(dirname "$0")/lab/testlib.sh"
t_require_lab
XMEM_LAB_NO_XMEMD=1 lab_up shard
J=$LAB/jobs
cd "$J" || fail "no $J"

cat >"$J/train.sbatch" <<'SCRIPT'
#!/bin/bash
#SBATCH --gres=gpu:1
#SBATCH --time=5
echo "job $SLURM_JOB_ID"
python3 -c 'print("training")'
env | grep -E '^(XMEM_|SLURM_SPANK_XMEM_|CUDA_MPS|CUDA_VISIBLE|SLURM_SHARDS)' | sort
SCRIPT

# 1. A bad value: one line naming the value and the fix; sbatch fails; nothing queued.
before=$(squeue -h -t all | wc -l)
run sbatch --xmem=12X "$J/train.sbatch"
expect_true "sbatch --xmem=12X succeeded" [ "$RUN_RC" != 0 ]
expect_out "xmem: --xmem: invalid value: '12X' \(use --xmem, --xmem=check, --xmem=off or a size such as --xmem=12G\)" "bad value message"
expect_true "a job was queued for --xmem=12X" [ "$(squeue -h -t all | wc -l)" = "$before" ]
pass "invalid --xmem value refused before submission"

# 2. A declared budget: 12 GiB + 10% margin on a 40 GiB GPU with 10 shards = shard:4.
submit --xmem=12G -o "$J/%j.out" "$J/train.sbatch"
expect_out "xmem: declared budget 12288 MiB, the job's limit" "budget message"
expect_out "xmem: requesting shard:4 instead of one whole GPU" "cli_filter preview"
expect_one_limit "job $JOB" "$RUN_OUT
$(lab_comment "$JOB")"
expect_field "$JOB" TresPerNode gres:shard:4 "--xmem=12G"
expect_true "comment of job $JOB: $(lab_comment "$JOB")" \
    grep -q "xmem: estimate=declared limit=12288M policy=shard request=gres:gpu:1->shard:4" <<<"$(lab_comment "$JOB")"
lab_wait_state "$JOB" 30 COMPLETED || fail "budget job did not complete"
out=$(cat "$J/$JOB.out")
expect_true "task did not get 4 shards: $out" grep -qx "SLURM_SHARDS_ON_NODE=4" <<<"$out"
expect_true "no MPS limit in the task: $out" grep -qx "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=12288M" <<<"$out"
expect_false "process XMEM_* variables leaked into the job: $out" \
    grep -qE "^XMEM_(MODE|LIMIT_MB|PEAK_MB|GPU|REQUEST_ID|DECISION|ORIGIN)=" <<<"$out"
pass "--xmem=12G → shard:4, comment, task limit, nothing leaked"

# 3. #SBATCH --xmem in the script.
{ sed -n 1p "$J/train.sbatch"; echo "#SBATCH --xmem=4G"; sed 1d "$J/train.sbatch"; } >"$J/directive.sbatch"
submit --hold "$J/directive.sbatch"
expect_field "$JOB" TresPerNode gres:shard:2 "#SBATCH --xmem=4G"
pass "#SBATCH --xmem=4G → shard:2"

# 4. The command line wins over #SBATCH; --xmem=off leaves the request alone.
submit --hold --xmem=off "$J/directive.sbatch"
expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "--xmem=off over #SBATCH --xmem (a whole GPU, as every share)"
pass "--xmem=off on the command line beats #SBATCH --xmem"

# 5. --wrap, and --gpus=1 instead of --gres.
submit --hold --gpus=1 --xmem=8G --wrap "python3 -c 'print(1)'"
expect_field "$JOB" TresPerNode gres:shard:3 "--wrap --gpus=1 --xmem=8G"
expect_true "TresPerJob kept: $(lab_field "$JOB" TresPerJob)" [ -z "$(lab_field "$JOB" TresPerJob)" ]
submit --hold --gpus-per-node=1 --xmem=8G --wrap "python3 t.py"
expect_field "$JOB" TresPerNode gres:shard:3 "--gpus-per-node=1"
submit --hold -n 1 --gpus-per-task=1 --xmem=8G --wrap "python3 t.py"
expect_field "$JOB" TresPerNode gres:shard:3 "--gpus-per-task=1 with one task"
expect_true "TresPerTask kept: $(lab_field "$JOB" TresPerTask)" [ -z "$(lab_field "$JOB" TresPerTask)" ]
pass "--wrap with --gpus=1, --gpus-per-node=1, --gpus-per-task=1 (one task) → shard:3"

# 6. Estimate larger than the GPU: keeps gpu:1 with a warning.
submit --hold --xmem=39G "$J/train.sbatch"
expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "--xmem=39G (a whole GPU, as every share)"
expect_out "xmem: warning: limit .* keeps its whole GPU|xmem: limit .* the job keeps its whole GPU" "whole-GPU warning"
pass "budget above 90% of the GPU keeps its whole GPU (every share of one) with a warning"

# 7. Several GPUs on one node (GPUs or tasks) are left unchanged, with a message (Slurm
#    22.05 gives a job's shards on a node from one GPU: docs/slurm.md, "Multi-GPU jobs").
submit --hold --gres=gpu:2 --xmem=4G "$J/train.sbatch"
expect_field "$JOB" TresPerNode gres:gpu:2 "--gres=gpu:2"
expect_out "2 GPUs on one node stay whole.*request left unchanged" "multi-GPU message"
submit --hold -n 2 --gpus-per-task=1 --xmem=4G --wrap "python3 t.py"
expect_true "gpus-per-task job rewritten" [ -z "$(lab_field "$JOB" TresPerNode)" ]
pass "multi-GPU requests unchanged"

# 8. The shard count is capped at the per-GPU count (a site allowing >100% of a GPU).
cp "$LAB/etc/xmem_policy.lua" "$LAB/etc/xmem_policy.lua.orig"
sed -i 's/whole_gpu_above_percent = 90/whole_gpu_above_percent = 150/' "$LAB/etc/xmem_policy.lua"
submit --hold --xmem=39G "$J/train.sbatch"
expect_field "$JOB" TresPerNode gres:shard:10 "cap"
# A broken policy file leaves jobs unchanged and says why in the controller log.
echo "return {" >"$LAB/etc/xmem_policy.lua"
submit --hold --xmem=4G "$J/train.sbatch"
expect_field "$JOB" TresPerNode gres:gpu:1 "broken policy"
expect_true "no log line for the broken policy" \
    grep -q "xmem: uid 0: cannot load $LAB/etc/xmem_policy.lua" "$LAB/log/slurmctld.log"
mv "$LAB/etc/xmem_policy.lua.orig" "$LAB/etc/xmem_policy.lua"
pass "shard count capped at 10; broken policy leaves the job unchanged"

# 9. salloc and srun outside a job; srun steps inside a resized job get its share.
run salloc --gres=gpu:1 --xmem=4G srun --gres=gpu:1 printenv SLURM_SHARDS_ON_NODE CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
expect_rc 0 "salloc --xmem=4G"
expect_out "^2$" "salloc step shards"
pass "salloc --gres=gpu:1 --xmem=4G runs steps on shard:2"
run srun --gres=gpu:1 --xmem=4G printenv SLURM_SHARDS_ON_NODE CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
expect_rc 0 "srun --xmem=4G outside a job"
expect_out "^2$" "srun shards"
expect_out "^0=4096M$" "srun MPS limit"
pass "srun --gres=gpu:1 --xmem=4G outside a job: shard:2 and a 4096M limit"
cat >"$J/steps.sbatch" <<'SCRIPT'
#!/bin/bash
#SBATCH --gres=gpu:1
srun --gres=gpu:1 printenv SLURM_SHARDS_ON_NODE
echo "step rc=$?"
sbatch --parsable --hold --gres=gpu:1 --wrap "python3 nested.py" >nested.id
echo "nested rc=$?"
SCRIPT
submit --xmem=4G -o "$J/%j.out" "$J/steps.sbatch"
lab_wait_state "$JOB" 40 COMPLETED FAILED || fail "steps job did not finish"
out=$(cat "$J/$JOB.out")
expect_true "srun --gres=gpu:1 inside a resized job failed: $out" grep -qx "step rc=0" <<<"$out"
expect_true "step did not run on the job's share: $out" grep -qx "2" <<<"$out"
nested=$(cat "$J/nested.id")
expect_true "nested sbatch gave no job id: $out" [ -n "$nested" ]
expect_field "$nested" TresPerNode "$(lab_whole_gres)" "nested sbatch (a whole GPU, as every share)"
run squeue -h -j "$nested" -o %k
expect_no_out "xmem: estimate" "nested sbatch comment"
pass "srun gpu:1 inside a resized job maps to its share; nested sbatch not sized"

# 10. Never lose a job: no daemon → 20 submissions, all queued with gpu:1 and a warning.
ids=()
for i in $(seq 1 20); do
    run sbatch --hold --xmem "$J/train.sbatch"
    expect_out "xmem: cannot reach xmemd at $LAB/run/xmemd.sock.*the job is submitted with its original request" "daemon-stopped warning ($i)"
    id=$(lab_jobid "$RUN_OUT")
    expect_true "submission $i with the daemon stopped was lost" [ -n "$id" ]
    ids+=("$id")
done
for id in "${ids[@]}"; do expect_field "$id" TresPerNode "$(lab_whole_gres)" "daemon stopped"; done
pass "daemon stopped: 20/20 submissions queued with their whole GPU"

# 11. A script on standard input: a clear message, submitted unchanged.
run sh -c "sbatch --hold --xmem <'$J/train.sbatch'"
expect_out "xmem: the batch script comes from standard input.*pass it as a file" "stdin message"
JOB=$(lab_jobid "$RUN_OUT")
expect_true "stdin job lost" [ -n "$JOB" ]
expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "stdin script"
pass "script on stdin: message, job kept"

# 12. Invalid plugstack arguments stop the plugin from loading, with the key named;
#     on_failure=reject refuses a job xmem cannot size. (Client-side configuration copies.)
mkdir -p "$LAB/alt"
for args in "timeout=never" "color=blue" "on_failure=reject"; do
    sed "s|^PlugStackConfig=.*|PlugStackConfig=$LAB/alt/plugstack.conf|" "$LAB/etc/slurm.conf" >"$LAB/alt/slurm.conf"
    cp "$LAB/etc/cli_filter.lua" "$LAB/etc/xmem_lib.lua" "$LAB/etc/xmem_policy.lua" "$LAB/alt/"
    echo "required $LAB/lib/xmem.so socket=$LAB/run/xmemd.sock $args" >"$LAB/alt/plugstack.conf"
    before=$(squeue -h -t all | wc -l)
    RUN_OUT=$(SLURM_CONF=$LAB/alt/slurm.conf timeout 60 sbatch --hold --xmem "$J/train.sbatch" 2>&1)
    RUN_RC=$?
    expect_true "sbatch succeeded with plugstack '$args'" [ "$RUN_RC" != 0 ]
    case $args in
    timeout=never) expect_out "xmem: timeout: invalid value: never \(an integer from 1 to 3600\)" "bad timeout" ;;
    color=blue) expect_out "xmem: plugstack.conf: unknown argument 'color'" "unknown key" ;;
    on_failure=reject) expect_out "this site refuses jobs xmem cannot size \(on_failure=reject\)" "reject" ;;
    esac
    expect_true "a job was queued with plugstack '$args'" [ "$(squeue -h -t all | wc -l)" = "$before" ]
done
pass "bad plugstack arguments refuse to load; on_failure=reject refuses the job"
finish
