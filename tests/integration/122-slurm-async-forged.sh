#!/usr/bin/env bash
# Only root's signed decision settles a held job (docs/async.md, "Trust"): a user who writes
# "xmem-decision ..." or "xmem-release ..." into their held job's AdminComment, root with a
# credential another uid signed, and root replaying a decision signed for another job or for
# another request change nothing; the one decision signed by xmemd's uid for this job and its
# request narrows it, and that same decision replayed afterwards changes nothing more.
T_NAME=122-slurm-async-forged
. "$(dirname "$0")/lab/testlib.sh"
. "$(dirname "$0")/lab/async.bash"
t_require_async_lab
id xmemt1 >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin xmemt1 ||
    fail "cannot create the second user xmemt1"
t1=$(id -u xmemt1)

lab_up shard
cd "$LAB/jobs" || fail "no $LAB/jobs"
# Profiles that outlive the test: xmemd itself settles neither job while it runs.
slow_script a.sbatch 5000 90
slow_script b.sbatch 5001 90
submit_as xmemt1 timeout 60 sbatch --xmem -o /dev/null a.sbatch
a=$JOB
submit_as xmemt1 timeout 60 sbatch --xmem -o /dev/null b.sbatch
b=$JOB
expect_held "$a" "job $a"
expect_held "$b" "job $b"
mark_b=$(admin_comment "$b")
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
id_a=$(field id "$(admin_comment "$a")")
id_b=$(field id "$mark_b")

# decision JOB REQUEST UID: a narrowing payload bound to job b's digests (limit 2 GiB).
decision() {
    echo "xmem-decision v1 uid=$3 request=$2 peak=1932735283 limit=2147483648 gpu=A100-40GB" \
        "script=$(field script "$mark_b") dir=$(field dir "$mark_b") gres=gpu:1" \
        "envnames=$(field envnames "$mark_b") env=$(field env "$mark_b") expires=$(($(date +%s) + 600)) job=$1"
}
# unchanged WHAT: job b is still held, as it was.
unchanged() {
    expect_field "$b" TresPerNode "gres:shard:$LAB_SHARDS_PER_GPU" "$1"
    expect_field "$b" Reason BeginTime "$1"
    expect_eq "$(admin_comment "$b")" "$mark_b" "$1: the mark"
}
user() { run runuser -u xmemt1 -- env SLURM_CONF="$SLURM_CONF" "$@"; }

user scontrol update JobId="$b" AdminComment="xmem-decision $(cred xmemt1 "$(decision "$b" "$id_b" "$t1")")"
expect_true "xmemt1's decision was accepted" [ "$RUN_RC" != 0 ]
unchanged "after the owner's own decision"
user scontrol update JobId="$b" AdminComment="xmem-release I want it now"
expect_true "xmemt1's release was accepted" [ "$RUN_RC" != 0 ]
unchanged "after the owner's release"
pass "the job's owner can neither narrow nor release their held job"

run scontrol update JobId="$b" AdminComment="xmem-decision $(cred xmemt1 "$(decision "$b" "$id_b" "$t1")")"
expect_true "a decision signed by xmemt1 was accepted from root" [ "$RUN_RC" != 0 ]
unchanged "after root passed a decision xmemt1 signed"
run scontrol update JobId="$b" AdminComment="xmem-decision $(cred root "$(decision "$a" "$id_b" "$t1")")"
expect_true "a decision signed for job $a was accepted for job $b" [ "$RUN_RC" != 0 ]
unchanged "after a decision for job $a"
run scontrol update JobId="$b" AdminComment="xmem-decision $(cred root "$(decision "$b" "$id_a" "$t1")")"
expect_true "a decision for request $id_a was accepted for job $b (request $id_b)" [ "$RUN_RC" != 0 ]
unchanged "after a decision for another request"
run scontrol update JobId="$b" AdminComment="xmem-decision $(cred root "$(decision "$b" "$id_b" 0)")"
expect_true "a decision for uid 0 was accepted for xmemt1's job" [ "$RUN_RC" != 0 ]
unchanged "after a decision for another user"
grep -q "held job's decision refused: decision was signed for job $a, not job $b; nothing changed" \
    "$LAB/log/slurmctld.log" || fail "the controller's log does not say why the replay was refused"
pass "forged and replayed decisions change nothing; the controller's log says why"

good="xmem-decision $(cred root "$(decision "$b" "$id_b" "$t1")")"
run scontrol update JobId="$b" AdminComment="$good"
expect_rc 0 "root's decision signed for job $b and request $id_b"
expect_field "$b" TresPerNode gres:shard:1 "job $b narrowed"
expect_true "job $b: no packing record: $(admin_comment "$b")" \
    grep -q "^xmem: estimate=1844M limit=2048M policy=shard request=gres:gpu:1->shard:1$" <<<"$(admin_comment "$b")"
lab_wait_state "$b" 60 RUNNING COMPLETED || fail "narrowed job $b did not start"
run scontrol update JobId="$b" AdminComment="$good"
expect_true "the decision replayed on job $b was accepted again" [ "$RUN_RC" != 0 ]
expect_field "$a" TresPerNode "gres:shard:$LAB_SHARDS_PER_GPU" "job $a after job $b's decision"
pass "the decision xmemd's uid signed for the job and its request narrows it, once"
timeout 10 scancel "$a" "$b"
finish
