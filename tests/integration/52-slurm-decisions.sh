#!/usr/bin/env bash
# The controller trusts only decisions xmemd signed for this user and this moment. A user
# who bypasses the xmem plugin (own slurm.conf, own SPANK plugin: lab/forge-spank.c) and
# hands job_submit.lua forged, altered, expired, other users' or replayed decisions gets
# the original request, and the controller log says why. A valid one (signed by the
# daemon's uid) is the positive control that the path works at all.
T_NAME=52-slurm-decisions
. "$(dirname "$0")/lab/testlib.sh"
t_require_lab
command -v gcc >/dev/null || t_skip "gcc not installed"
XMEM_LAB_NO_XMEMD=1 lab_up shard
cd "$LAB/jobs" || fail "no jobs dir"

lab_forge_client

now=$(date +%s)
# A --wrap job's decision names the script sbatch builds from the command (sbatch 22.05).
wrap_sha=$(printf '#!/bin/sh\n# This script was created by sbatch --wrap.\n\npython3 train.py\n' | sha256sum | cut -d' ' -f1)
# And the directory it ran in: the jobs directory, as sbatch's getcwd spells it.
jobs_dir=$(pwd -P | tr -d '\n' | sha256sum | cut -d' ' -f1)
# And its environment, over PATH alone (the payload names what it binds): root's, as
# forged_sbatch runs sbatch.
path=$(runuser -u root -- printenv PATH)
job_env=$(printf 'PATH=%d:%s\n' "${#path}" "$path" | sha256sum | cut -d' ' -f1)
payload() { echo "xmem-decision v1 uid=$1 request=7 peak=3221225472 limit=4294967296 gpu=A100-40GB script=$wrap_sha dir=$jobs_dir gres=gpu:1 envnames=PATH env=$job_env expires=$2"; }

# forged_submit AS_USER CREDENTIAL: submits a held gpu:1 --wrap job carrying the credential.
forged_submit() { forged_sbatch "$1" "$2" --gres=gpu:1 --wrap "python3 train.py"; }

# expect_ignored WHY_REGEX WHAT
expect_ignored() {
    expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "$2"
    expect_true "$2: controller log lacks 'decision ignored: $1'" \
        grep -qE "xmem: uid [0-9]+: decision ignored: $1; job keeps its original request" "$LAB/log/slurmctld.log"
    expect_out "xmem: the estimate could not be verified" "$2: user message"
}

# 1. Positive control: a decision signed by the daemon's uid (root in the lab) for root.
valid=$(cred root "$(payload 0 $((now + 600)))")
forged_submit root "$valid"
expect_field "$JOB" TresPerNode gres:shard:2 "valid decision"
pass "a valid signed decision is applied (shard:2)"

# 2. Replayed: the same credential again.
forged_submit root "$valid"
expect_ignored "credential rejected by munge: Replayed credential.*" "replayed decision"
pass "replayed decision ignored"

# 3. Forged: signed by the user, not the daemon.
forged_submit nobody "$(cred nobody "$(payload 65534 $((now + 600)))")"
expect_ignored "decision signed by uid 65534, not by xmemd \(uid 0\)" "user-signed decision"
pass "decision signed by the user ignored"

# 4. Another user's decision (signed by the daemon for uid 0, used by nobody).
forged_submit nobody "$(cred root "$(payload 0 $((now + 600)))")"
expect_ignored "decision was made for uid 0, job belongs to uid 65534" "other user's decision"
pass "another user's decision ignored"

# 5. Expired.
forged_submit root "$(cred root "$(payload 0 $((now - 5)))")"
expect_ignored "decision expired at .*" "expired decision"
pass "expired decision ignored"

# 6. Altered: one character of the credential changed.
good=$(cred root "$(payload 0 $((now + 600)))")
mid=$((${#good} / 2))
c=${good:$mid:1}
[ "$c" = A ] && r=B || r=A
forged_submit root "${good:0:$mid}$r${good:$((mid + 1))}"
expect_ignored "credential rejected by munge: .*" "altered decision"
pass "altered decision ignored"

# 7. No decision at all with mode auto, and a non-credential string.
forged_submit nobody ""
expect_ignored "no signed decision" "missing decision"
forged_submit nobody 'MUNGE:$(touch /tmp/xmem-pwned)'
expect_ignored "malformed decision" "injection attempt"
[ ! -e /tmp/xmem-pwned ] || { rm -f /tmp/xmem-pwned; fail "a decision string reached a shell"; }
pass "missing and malformed decisions ignored"
finish
