#!/usr/bin/env bash
# A decision is bound to the job it was made for (issue 15, findings 10 and 11): the SHA-256
# of its batch script and its GPU request are in the signed payload, and job_submit.lua
# compares them with the job it is attached to. An unprivileged user holding a genuine
# decision (signed by xmemd's uid for them) for tiny.sbatch cannot apply it to big.sbatch,
# nor to another GPU request; a payload field given twice cannot override the first; a
# typed request (--gres=gpu:a100:1) keeps its type. Each refused job keeps its request.
T_NAME=67-slurm-bound-decisions
. "$(dirname "$0")/lab/testlib.sh"
t_require_lab
command -v gcc >/dev/null || t_skip "gcc not installed"
LAB_GPU_TYPE=a100 XMEM_LAB_NO_XMEMD=1 lab_up shard
cd "$LAB/jobs" || t_fail "no jobs dir"
lab_forge_client
U=nobody
UID_U=$(id -u $U)

printf '#!/bin/bash\n#SBATCH --gres=gpu:1\npython3 tiny.py\n' >tiny.sbatch
printf '#!/bin/bash\n#SBATCH --gres=gpu:1\npython3 big.py --layers 96\n' >big.sbatch
chmod a+r tiny.sbatch big.sbatch
tiny=$(sha256sum <tiny.sbatch | cut -d' ' -f1)
later=$(($(date +%s) + 600))
# decision SCRIPT_SHA GRES [EXTRA]: what xmemd signs for uid U (4 GiB limit → shard:2).
decision() {
    cred root "xmem-decision v1 uid=$UID_U request=9 peak=3221225472 limit=4294967296 gpu=A100-40GB script=$1 gres=$2 ${3:-}expires=$later"
}

# expect_refused WHY_REGEX REQUEST WHAT
expect_refused() {
    expect_field "$JOB" TresPerNode "$2" "$3"
    grep -qE "xmem: uid $UID_U: decision ignored: $1; job keeps its original request" "$LAB/log/slurmctld.log" ||
        t_fail "$3: controller log lacks 'decision ignored: $1'"
    expect_out "xmem: the estimate could not be verified" "$3: user message"
}

# 1. Positive control: the decision for tiny.sbatch, on tiny.sbatch (sbatch sends the file's
#    bytes unchanged: the controller's digest of job_desc.script is the file's).
forged_sbatch $U "$(decision "$tiny" gpu:1)" tiny.sbatch
expect_field "$JOB" TresPerNode gres:shard:2 "decision on its own script"
t_ok "a decision for tiny.sbatch is applied to tiny.sbatch (shard:2)"

# 2. The same decision attached to big.sbatch.
forged_sbatch $U "$(decision "$tiny" gpu:1)" big.sbatch
expect_refused "decision was made for another batch script \(sha256 ${tiny:0:12}, this job's [0-9a-f]{12}\)" \
    gres:gpu:1 "tiny's decision on big.sbatch"
t_ok "a decision for tiny.sbatch attached to big.sbatch is refused; the job keeps gpu:1"

# 3. A decision for a --wrap job (no script file) attached to big.sbatch.
forged_sbatch $U "$(decision - gpu:1)" big.sbatch
expect_refused "decision was made for another batch script \(sha256 -, this job's [0-9a-f]{12}\)" \
    gres:gpu:1 "--wrap decision on big.sbatch"
t_ok "a decision made without a script is refused for a batch script"

# 4. Another GPU request than the decision's.
forged_sbatch $U "$(decision "$tiny" gpu:a100:1)" tiny.sbatch
expect_refused "decision was made for the GPU request gpu:a100:1, this job asks for gpu:1" \
    gres:gpu:1 "decision for another GPU request"
t_ok "a decision for another GPU request is refused"

# 5. A later field cannot override an earlier one (an unescaped GPU name once could).
forged_sbatch $U "$(decision "$tiny" gpu:1 "limit=1 ")" tiny.sbatch
expect_refused "decision field 'limit' given twice" gres:gpu:1 "repeated field"
forged_sbatch $U "$(decision "$tiny" gpu:1 "whole=0 ")" tiny.sbatch
expect_refused "unknown decision field 'whole'" gres:gpu:1 "unknown field"
t_ok "a payload field given twice, or unknown, refuses the decision"

# 6. A typed request keeps its type: a share has none, so the job keeps its whole GPU.
forged_sbatch $U "$(decision "$tiny" gpu:a100:1)" --gres=gpu:a100:1 tiny.sbatch
expect_field "$JOB" TresPerNode gres:gpu:a100:1 "typed request"
grep -q "xmem: uid $UID_U: a share cannot keep the GPU type a100: the job keeps its whole GPU" \
    "$LAB/log/slurmctld.log" || t_fail "typed request: controller log lacks the reason"
expect_out "xmem: a share cannot keep the GPU type a100" "typed request: user message"
t_ok "--gres=gpu:a100:1 keeps its type (whole GPU, with the reason)"
t_done
