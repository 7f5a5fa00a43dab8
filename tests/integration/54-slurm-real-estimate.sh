#!/usr/bin/env bash
# The whole chain with nothing faked but the GPU: sbatch --xmem on the bundled example job,
# profiled by the real xmem-estimate through xmemd, the decision verified by the controller.
# The exact numbers belong to the estimator's own tests; here the share must follow from
# the estimate the daemon signed (limit + 10% margin over 4096-MiB shards).
T_NAME=54-slurm-real-estimate
. "$(dirname "$0")/lab/testlib.sh"
t_require_lab
[ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"
lab_prefer_torch_python
lab_real_profiler_ok || t_skip "the real xmem-estimate is not usable here (not built with its capture library, or no torch)"
XMEM_LAB_PROFILER=real XMEM_LAB_TIMEOUT=600 lab_up shard
expect_true "lab is not using the real profiler" grep -q "xmem-estimate" "$LAB/etc/xmem.yaml"
cp "$XMEM_SRC/examples/train.py" "$XMEM_SRC/examples/train.sbatch" "$LAB/jobs/"
cd "$LAB/jobs" || fail "no jobs dir"

submit --hold --xmem train.sbatch
expect_out "xmem: estimate for A100-40GB: peak [0-9.]+ [MG]iB, limit [0-9.]+ [MG]iB" "estimate message"
comment=$(lab_comment "$JOB")
limit=$(sed -n 's/.*xmem: estimate=[0-9]*M limit=\([0-9]*\)M policy=shard.*/\1/p' <<<"$comment")
expect_true "no estimate in the comment: $comment" [ -n "$limit" ]
want=$((((limit * 110 + 99) / 100 + 4095) / 4096))
[ "$want" -ge 1 ] || want=1
expect_true "estimate $limit MiB is beyond the GPU for a small CNN" [ "$want" -le 10 ]
expect_field "$JOB" TresPerNode "gres:shard:$want" "real estimate"
pass "real estimate ${limit} MiB → shard:$want"
finish
