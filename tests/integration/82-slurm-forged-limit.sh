#!/usr/bin/env bash
# A packed job's limit and the site's required level come from root's record, never from the
# client (docs/enforcement.md "Where the limit comes from"). A user who submits through their
# own SPANK plugin (lab/forge-spank.c) with a valid decision but leaves
# SLURM_SPANK_XMEM_LIMIT_MB out, or sets it to 1e3, is still packed by the controller; the
# node must still hold the job to the decision's 4096 MiB (dmem here, on a fake cgroup tree),
# and where it cannot reach the required level, or cannot read the record, it must refuse
# the job with one line rather than run it unenforced. A comment holding "AdminComment="
# must not hide the record (case 3 fails where the node reads it from `scontrol show job`).
# A declared budget of 1e3 is not a number job_submit.lua reads (plain decimal digits
# only): the job keeps its whole GPU.
T_NAME=82-slurm-forged-limit
. "$(dirname "$0")/lab/testlib.sh"
t_require_lab
command -v gcc >/dev/null || t_skip "gcc not installed"
[ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (renders the policy)"
LAB=$(mktemp -d /tmp/xmem-lab.XXXXXX)
FAKECG=$LAB/fakecg
REGION=drm/0000:3b:00.0/vram0
mkdir -p "$FAKECG"
echo "$REGION 42949672960" >"$FAKECG/dmem.capacity"
# No MPS control program: a node without a job cgroup reaches client only.
XMEM_PLUGSTACK_ARGS="cgroup_root=$FAKECG job_cgroup=$FAKECG/job_%j mps_control=/nonexistent" \
    XMEM_LAB_NO_XMEMD=1 lab_up shard
J=$LAB/jobs
cd "$J" || fail "no $J"
SLURMD_LOG=$LAB/log/slurmd.log
lab_forge_client

# The site requires dmem, and the lab's partitions declare it.
sed -i -e "s/^policy:\$/policy:\n  require_enforcement: dmem/" \
    -e "s/^\(  default: {.*\)}\$/\1, enforcement: dmem}/" \
    -e "s/^\(    debug: {.*\)}\$/\1, enforcement: dmem}/" "$LAB/etc/xmem.yaml"
timeout 10 "$XMEM_BUILD/bin/xmemd" --config "$LAB/etc/xmem.yaml" \
    --render-policy "$LAB/etc/xmem_policy.lua" || fail "cannot render the policy"
grep -q 'require_enforcement = "dmem"' "$LAB/etc/xmem_policy.lua" ||
    fail "policy lacks the level: $(cat "$LAB/etc/xmem_policy.lua")"

# A decision xmemd (root in the lab) signed for root, for a --wrap job in this directory with
# root's PATH: limit 4 GiB.
CMD='echo ran'
wrap_sha=$(printf '#!/bin/sh\n# This script was created by sbatch --wrap.\n\n%s\n' "$CMD" | sha256sum | cut -d' ' -f1)
jobs_dir=$(pwd -P | tr -d '\n' | sha256sum | cut -d' ' -f1)
path=$(runuser -u root -- printenv PATH)
job_env=$(printf 'PATH=%d:%s\n' "${#path}" "$path" | sha256sum | cut -d' ' -f1)
decision() {
    cred root "xmem-decision v1 uid=0 request=7 peak=3221225472 limit=4294967296 gpu=A100-40GB script=$wrap_sha dir=$jobs_dir gres=gpu:1 envnames=PATH env=$job_env expires=$(($(date +%s) + 600))"
}

# forged VAR=VALUE...: a held gpu:1 job through the forging client, with a fresh decision
# and the given FORGE_* variables (none for XMEM_LIMIT_MB: the variable is left out), and
# COMMENT as its comment; JOB.
COMMENT=
forged() {
    RUN_OUT=$(runuser -u root -- env SLURM_CONF="$LAB/evil/slurm.conf" FORGE_XMEM_ORIGIN=sbatch \
        FORGE_XMEM_DECISION="$(decision)" "$@" timeout 60 sbatch --hold -o "$J/%j.out" \
        ${COMMENT:+--comment="$COMMENT"} --gres=gpu:1 --wrap "$CMD" 2>&1)
    JOB=$(lab_jobid "$RUN_OUT")
    [ -n "$JOB" ] || fail "forged submission was not queued (never lose a job)"
}

# 1, 2, 3. The variable left out, then 1e3, then left out with a comment that makes
#          `scontrol show job` show a second AdminComment=: packed, and the node still holds
#          the job to the decision's limit in its cgroup's dmem.max.
for limit in none 1e3 comment; do
    COMMENT=
    case $limit in
    none) forged FORGE_XMEM_MODE=auto ;;
    comment) COMMENT="x AdminComment=none" forged FORGE_XMEM_MODE=auto ;;
    *) forged FORGE_XMEM_MODE=auto FORGE_XMEM_LIMIT_MB="$limit" ;;
    esac
    expect_field "$JOB" TresPerNode gres:shard:2 "forged client ($limit), valid decision"
    timeout 10 squeue -h -j "$JOB" -O admin_comment:0 |
        grep -q "limit=4096M policy=shard required=dmem request=gres:gpu:1->shard:2" ||
        fail "the packing record lacks the required level: $(squeue -h -j "$JOB" -O admin_comment:0)"
    mkdir "$FAKECG/job_$JOB"
    echo "$REGION max" >"$FAKECG/job_$JOB/dmem.max"
    scontrol release "$JOB"
    lab_wait_state "$JOB" 30 COMPLETED FAILED || fail "job $JOB did not end"
    got=$(cat "$FAKECG/job_$JOB/dmem.max")
    [ "$got" = "$REGION 4294967296" ] ||
        fail "forged client ($limit): dmem.max holds '$got', not the record's 4 GiB"
    grep -q "xmem: job $JOB: GPU memory limit 4096 MiB enforced by dmem\$" "$SLURMD_LOG" ||
        fail "job $JOB not enforced by dmem: $(grep "xmem: job $JOB:" "$SLURMD_LOG")"
    grep -qx ran "$J/$JOB.out" || fail "the enforced job did not run: $(cat "$J/$JOB.out")"
    pass "forged client ($limit): dmem.max holds the record's 4 GiB"
done

# 4. The variable left out on a node without the job's cgroup: below the required dmem, the
#    packed job does not run (no request id: the forged job is not requeued, it fails).
forged FORGE_XMEM_MODE=auto
expect_field "$JOB" TresPerNode gres:shard:2 "forged client, no job cgroup"
scontrol release "$JOB"
lab_wait_state "$JOB" 30 FAILED COMPLETED || fail "job $JOB did not end"
! grep -qx ran "$J/$JOB.out" || fail "the job ran unenforced where dmem is required"
line="xmem: job $JOB: this node holds a GPU share only at level client, the site requires dmem"
grep -q "$line" "$SLURMD_LOG" || fail "slurmd log lacks the refusal: $(grep "job $JOB" "$SLURMD_LOG")"
grep -q "$line" "$J/$JOB.out" || fail "the job's stderr lacks the refusal: $(cat "$J/$JOB.out")"
pass "no limit variable, no job cgroup: the packed job is refused with one line, it never runs"

# 5. The record cannot be read (squeue fails; slurmstepd reads plugstack.conf at each
#    launch) where the job's environment says dmem is required: refused with one line.
sed -i 's|xmem.so |&squeue=/bin/false |' "$LAB/etc/plugstack.conf"
forged FORGE_XMEM_MODE=auto
expect_field "$JOB" TresPerNode gres:shard:2 "forged client, record unreadable"
mkdir "$FAKECG/job_$JOB"
echo "$REGION max" >"$FAKECG/job_$JOB/dmem.max"
scontrol release "$JOB"
lab_wait_state "$JOB" 30 FAILED COMPLETED || fail "job $JOB did not end"
sed -i 's|squeue=/bin/false ||' "$LAB/etc/plugstack.conf"
! grep -qx ran "$J/$JOB.out" || fail "the job ran without its record where dmem is required"
line="xmem: job $JOB: the packed job's GPU memory limit could not be read from slurmctld"
grep -q "$line" "$J/$JOB.out" || fail "the job's stderr lacks the refusal: $(cat "$J/$JOB.out")"
pass "the record cannot be read where dmem is required: refused with one line, never runs"

# 6. A declared budget of 1e3 (tonumber reads 1000): not a number, the job stays whole.
forged FORGE_XMEM_MODE=budget FORGE_XMEM_LIMIT_MB=1e3
expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "declared budget 1e3 (kept whole, as every share)"
grep -q "xmem: uid 0: malformed declared budget '1e3'; job left unchanged" "$LAB/log/slurmctld.log" ||
    fail "the controller's log does not name the malformed budget"
scancel "$JOB"
pass "a declared budget of 1e3 is refused by the controller: the job keeps gres:gpu:1"
finish
