#!/usr/bin/env bash
# Multi-GPU jobs on the lab cluster (XMEM_LAB_CLUSTER=1; docs/slurm.md, "Multi-GPU jobs"):
# `sbatch --xmem -N 2 --gres=gpu:1` is profiled as 2 ranks (xmemd passes --world-size 2 to
# the estimator; the lab's fake one writes down what it got) and becomes a share on each of
# gpu1 and gpu2, each rank held to the estimate's limit on its node; `--gres=gpu:2` on one
# node stays whole with the one line that says why (Slurm 22.05 gives a job's shards on a node
# from one GPU only) and what would change it; a per-rank limit above the site's threshold
# keeps every node's whole GPU; a single-GPU job is profiled as one rank; after a CUDA OOM
# of one rank, the job is requeued once with a whole GPU's shards on every node; a job whose
# estimate outlasts sbatch's budget is held as a whole GPU's shards per node, then narrowed.
T_NAME=112-cluster-multi-gpu
. "$(dirname "$0")/lab/testlib.sh"
. "$(dirname "$0")/58-requeue-common.bash"
t_require_lab
[ -x "$LAB_XMEMD_BIN" ] || t_skip "no $LAB_XMEMD_BIN (the daemon is not built)"
command -v ip >/dev/null && command -v nsenter >/dev/null || t_skip "no ip or nsenter (make deps: iproute2)"
# sbatch waits 2 s for an estimate (part 6 takes longer; the others answer at once).
XMEM_LAB_CLUSTER=1 XMEM_LAB_PROFILER=fake XMEM_LAB_BUDGET=2 lab_up shard
requeue_fast_restart
J=$LAB/jobs
R=$LAB/fake
cd "$J" || fail "no $J"

# What each rank sees on its node: its node, its share, its GPU, the limit it is held to.
# With --oom-rank1, rank 1 (on gpu2) runs out of GPU memory on the first run.
cat >rank.py <<'PY'
import os, sys
e = os.environ.get
print("run", e("SLURM_RESTART_COUNT", "0"), "rank", e("SLURM_PROCID"), e("SLURMD_NODENAME"),
      "shards=%s" % e("SLURM_SHARDS_ON_NODE", "-"), "gpus=%s" % e("CUDA_VISIBLE_DEVICES", "-"),
      "limit=%s" % e("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "-"), flush=True)
if "--oom-rank1" in sys.argv and e("SLURM_PROCID") == "1" and e("SLURM_RESTART_COUNT", "0") == "0":
    sys.exit("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
PY
# multi_job FILE SBATCH_LINES LIMIT_MB NAME: a batch script whose ranks run rank.py under srun;
# the fake profiler's answer is LIMIT_MB per rank, and it reports to $R/NAME.
multi_job() {
    printf '#!/bin/bash\n%s\n#SBATCH -o %s\nsrun python3 rank.py --fake-limit-mb=%s --fake-report=%s\n' \
        "$2" "$J/$4.out" "$3" "$R/$4" >"$1"
}
world_of() { sed -n 's/^world_size=//p' "$R/$1" 2>/dev/null; }
# ranks_saw NAME RUN SHARDS LIMIT: in run RUN, rank 0 on gpu1 and rank 1 on gpu2 each had
# SHARDS shards of their node's GPU 0 and the limit LIMIT ("-": none).
ranks_saw() {
    local out rank
    out=$(cat "$J/$1.out")
    for rank in "0 gpu1" "1 gpu2"; do
        expect_true "run $2, rank ${rank% *} on ${rank#* }: shards=$3 limit=$4 expected; got: $out" \
            grep -qx "run $2 rank $rank shards=$3 gpus=0 limit=$4" <<<"$out"
    done
}

# 1. One GPU on each of two nodes: a share per node, two ranks each within 3000 MiB.
multi_job two-nodes.sh $'#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:1' 3000 two-nodes
submit --xmem two-nodes.sh
expect_rc 0 "sbatch -N 2 --gres=gpu:1"
expect_eq "$(world_of two-nodes)" 2 "the estimator's --world-size for 2 nodes x 1 GPU"
expect_field "$JOB" TresPerNode "gres:shard:1" "3000 MiB + 10% on a 4096 MiB shard, per node"
expect_true "record: $(lab_comment "$JOB")" grep -q "limit=3000M policy=shard nodes=2 request=gres:gpu:1->shard:1" \
    <<<"$(lab_comment "$JOB")"
lab_wait_state "$JOB" 60 COMPLETED || fail "job $JOB did not complete: $(cat "$J/two-nodes.out" 2>&1)"
expect_field "$JOB" NodeList "gpu[1-2]" "the job ran on both GPU nodes"
ranks_saw two-nodes 0 1 0=3000M
# Each node holds its rank: the srun step's plugin on gpu1 and on gpu2 (the batch step runs
# on gpu1 only), one line each in the nodes' shared slurmd.log.
n=$(grep -c "\[$JOB\.0\] xmem: job $JOB: GPU memory limit 3000 MiB enforced by client" "$LAB/log/slurmd.log")
expect_eq "$n" 2 "the srun step's nodes that held the rank to its limit"
expect_true "the batch step held it too" grep -q "\[$JOB\.batch\] xmem: job $JOB: GPU memory limit 3000 MiB" \
    "$LAB/log/slurmd.log"
pass "-N 2 --gres=gpu:1: profiled as 2 ranks, shard:1 on gpu1 and gpu2, each rank held to 3000 MiB"

# The other ways to ask for one GPU on each of two nodes: the decision the plugin got (bound
# to gpu:1:nodes:2) fits the job the controller reads, and the job is packed the same way.
for form in "-N 2 --gpus=2" "-N 2 --ntasks-per-node=1 --gpus-per-task=1" "-N 2 --gpus-per-node=1"; do
    # shellcheck disable=SC2086 # the form is words
    submit --xmem --hold $form --wrap "python3 rank.py --fake-limit-mb=3000 --form='$form'"
    expect_field "$JOB" TresPerNode "gres:shard:1" "sbatch $form"
    expect_true "$form: record: $(lab_comment "$JOB")" grep -q "nodes=2 request=gres:gpu:1->shard:1" \
        <<<"$(lab_comment "$JOB")"
done
pass "--gpus, --gpus-per-task and --gpus-per-node over 2 nodes: shard:1 per node"

# 2. Two GPUs on one node stay whole, with the reason and what would change it.
multi_job one-node.sh '#SBATCH --gres=gpu:2' 3000 one-node
submit --xmem --hold one-node.sh
expect_eq "$(world_of one-node)" 2 "the estimator's --world-size for 1 node x 2 GPUs"
expect_field "$JOB" TresPerNode "gres:gpu:2" "two GPUs on one node stay whole"
why="2 GPUs on one node stay whole: Slurm 22.05 gives a job's shards on a node from one GPU only"
expect_out "$why" "sbatch names why the request stays"
expect_out "MULTIPLE_SHARING_GRES_PJ" "and what would change it"
expect_true "Comment: $(lab_comment "$JOB")" grep -q "$why" <<<"$(lab_comment "$JOB")"
pass "--gres=gpu:2 on one node: whole, with the reason"

# 3. A per-rank limit past the site's threshold (90% of 40960 MiB) keeps whole GPUs.
multi_job big.sh $'#SBATCH -N 2\n#SBATCH --gres=gpu:1' 36000 big
submit --xmem --hold big.sh
expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "a rank of 36000 MiB keeps its whole GPU (every share of one) on each node"
expect_out "keeps its whole GPU" "sbatch says why"
pass "a per-rank limit past the threshold keeps whole GPUs"

# srun -n 4 in the script runs 4 ranks on the 2 GPUs: profiled as 4, and kept whole (two
# ranks would share each node's share, each held to the limit of one).
printf '#!/bin/bash\n#SBATCH -N 2\n#SBATCH --gres=gpu:1\nsrun -n 4 python3 rank.py --fake-limit-mb=3000 --fake-report=%s\n' \
    "$R/four" >four.sh
submit --xmem --hold four.sh
expect_eq "$(world_of four)" 4 "the estimator's --world-size for srun -n 4"
expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "4 ranks on 2 GPUs keep their GPUs (every share of one on each node)"
expect_out "the job runs 4 ranks on 2 GPUs" "sbatch says why"
pass "srun -n 4 on 2 GPUs: profiled as 4 ranks, whole"

# 4. One GPU: one rank, and no --world-size on the estimator's line.
multi_job single.sh '#SBATCH --gres=gpu:1' 2000 single
submit --xmem --hold single.sh
expect_eq "$(world_of single)" 1 "a single-GPU job's world size"
expect_field "$JOB" TresPerNode "gres:shard:1" "the single-GPU job's share"
pass "one GPU: one rank"

# 5. One rank's CUDA OOM: requeued once, the rerun on a whole GPU's shards on every node.
multi_job oom.sh $'#SBATCH -N 2\n#SBATCH --gres=gpu:1\n#SBATCH --open-mode=append' "3000 --oom-rank1" oom
submit --xmem oom.sh
expect_field "$JOB" TresPerNode "gres:shard:1" "the first run's share"
lab_wait_for 60 grep -q "^run 1 rank 1" "$J/oom.out" || fail "job $JOB was not rerun: $(cat "$J/oom.out")"
finished "$JOB"
expect_field "$JOB" TresPerNode "gres:shard:10" "the rerun's request: a whole GPU's shards per node"
ranks_saw oom 1 10 - # the rerun: a whole GPU on each node, no limit
expect_true "the requeue mark: $(admin_comment "$JOB")" grep -q "requeued after CUDA OOM from=shard:1 limit=3000M to=shard:10 whole" \
    <<<"$(admin_comment "$JOB")"
pass "a rank's OOM: requeued once with shard:10 on gpu1 and gpu2"

# 6. Past sbatch's budget (docs/async.md): held as shard:10 on each node, its mark bound to
#    the 2-node request, then narrowed by xmemd's signed decision to shard:1 per node.
multi_job held.sh $'#SBATCH -N 2\n#SBATCH --gres=gpu:1' "3000 --fake-sleep=4" held
submit --xmem held.sh
expect_out "the job is held until its estimate is ready" "sbatch of a slow 2-node estimate"
expect_field "$JOB" TresPerNode "gres:shard:10" "held as a whole GPU's shards per node"
expect_true "mark: $(admin_comment "$JOB")" grep -q "gres=gpu:1:nodes:2 held=shard:10" <<<"$(admin_comment "$JOB")"
lab_wait_for 30 sh -c "[ \"\$(timeout 5 scontrol show job -o $JOB | grep -o 'TresPerNode=[^ ]*')\" = TresPerNode=gres:shard:1 ]" ||
    fail "job $JOB not narrowed: $(lab_field "$JOB" TresPerNode), $(admin_comment "$JOB")"
expect_true "record: $(admin_comment "$JOB")" grep -q "limit=3000M policy=shard nodes=2 request=gres:gpu:1->shard:1" \
    <<<"$(admin_comment "$JOB")"
pass "a held 2-node job is narrowed to shard:1 per node"

# 7. srun outside a job: cli_filter.lua asks for the share per node, the controller agrees.
run timeout 60 srun --xmem -N 2 --gres=gpu:1 python3 rank.py --fake-limit-mb=3000 --fake-report="$R/srun"
expect_rc 0 "srun --xmem -N 2 --gres=gpu:1"
expect_eq "$(world_of srun)" 2 "srun's estimate at world size 2"
for rank in "0 gpu1" "1 gpu2"; do
    expect_out "^run 0 rank $rank shards=1 gpus=0 limit=0=3000M$" "srun rank ${rank% *} on ${rank#* }"
done
pass "srun -N 2 --gres=gpu:1: shard:1 on both nodes, each rank held to 3000 MiB"
finish
