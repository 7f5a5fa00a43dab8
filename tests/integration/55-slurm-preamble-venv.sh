#!/usr/bin/env bash
# A batch script's preamble, end to end on the lab cluster, submitted by a second user
# (xmemt1): the lines that set the environment (source .../activate, export, cd) run as that
# user before the profile, so the estimator runs with the venv's python; the lines that do
# work (srun hostname, python prepare.py) are not run and sbatch names them; a failing line
# leaves the job submitted with its original request and one line naming it; the preamble
# is part of the cache key; --export=NONE sends none of the submission's environment.
# The estimator is the lab's fake (tests/integration/lab/fake-profiler.sh --fake-report),
# which writes down the environment it was started in.
T_NAME=55-slurm-preamble-venv
. "$(dirname "$0")/lab/testlib.sh"
t_require_preamble_lab
XMEM_LAB_PROFILER=fake lab_up shard
J=$LAB/jobs
R=$LAB/fake

# Two tiny venvs whose python links to the system's: `python` on PATH names the venv. From
# a python every user can run (root's own, e.g. a pyenv under /root, is not).
base=/usr/bin/python3
[ -x "$base" ] || base=$(command -v python3)
for v in venv-a venv-b; do
    "$base" -m venv --without-pip --system-site-packages "$J/$v" || t_skip "$base -m venv unavailable"
done
chmod -R a+rX "$J"
runuser -u xmemt1 -- "$J/venv-a/bin/python" -c '' ||
    t_skip "xmemt1 cannot run $J/venv-a/bin/python (its base $base must be readable by every user)"
mkdir -p "$J/work"
echo 'print("the lab fake estimator never runs this")' >"$J/train.py"
cat >"$J/prepare.py" <<PY
open("$R/prepared", "w").write("ran")
PY

# job VENV: a batch script whose preamble activates VENV, with work lines before training
# (#XMEM names the training command, since `python prepare.py` runs python first).
job() {
    local train="python $J/train.py --fake-limit-mb=5000 --fake-report=$R/report"
    cat <<SH
#!/bin/bash
#SBATCH --gres=gpu:1
#SBATCH -o /dev/null
#XMEM $train
set -e
source $J/$1/bin/activate
export HF_HUB_OFFLINE=1
srun hostname
python prepare.py
cd $J/work
$train
SH
}

# as_user [VAR=value...] sbatch ...: submitted as xmemt1 (testlib.sh submit_as).
as_user() { submit_as xmemt1 "$@"; }
report() { sed -n "s/^$1=//p" "$R/report" 2>/dev/null; }

job venv-a >"$J/a.sh"
as_user HF_HOME=/scratch/hf timeout 60 sbatch --hold --xmem a.sh
expect_out "xmem: estimate for A100-40GB" "the preamble's job is estimated"
expect_true "the estimator did not run (no report)" [ -f "$R/report" ]
expect_true "python resolved to '$(report python)', not the venv's" \
    [ "$(report python)" = "$J/venv-a/bin/python" ]
expect_true "the interpreter's sys.prefix is '$(report prefix)'" [ "$(report prefix)" = "$J/venv-a" ]
expect_true "VIRTUAL_ENV is '$(report virtual_env)'" [ "$(report virtual_env)" = "$J/venv-a" ]
expect_true "the preamble and estimator ran as '$(report user)', not xmemt1" [ "$(report user)" = xmemt1 ]
expect_true "the estimator ran in '$(report pwd)', not where the preamble cd'd" \
    [ "$(report pwd)" = "$J/work" ]
expect_true "CUDA_VISIBLE_DEVICES is '$(report cuda)' in the profile" [ "$(report cuda)" = "" ]
expect_true "the submission's HF_HOME did not reach the profile" [ "$(report hf_home)" = /scratch/hf ]
pass "the preamble ran as xmemt1: python is the venv's ($(report python)), cwd $(report pwd)"
expect_out "not run before the profile.*line 8 'srun hostname', line 9 'python prepare.py'" "skipped lines named"
expect_true "skipped lines not in one line" [ "$(grep -c 'not run before the profile' <<<"$RUN_OUT")" = 1 ]
expect_true "python prepare.py was run by the preamble" [ ! -e "$R/prepared" ]
expect_field "$JOB" TresPerNode "gres:shard:2" "the estimate was applied"
pass "work lines named in one line and not run; job resized (shard:2)"

# The same script with another venv: the preamble is in the cache key, so it profiles again.
rm -f "$R/report"
job venv-b >"$J/b.sh"
as_user HF_HOME=/scratch/hf timeout 60 sbatch --hold --xmem b.sh
expect_no_out "\(cached\)" "a different venv must not reuse the first estimate"
expect_true "second venv: python is '$(report python)'" [ "$(report python)" = "$J/venv-b/bin/python" ]
pass "another venv is profiled again, with its own python"

# --export=NONE: none of the submission's environment reaches the profile.
rm -f "$R/report"
as_user HF_HOME=/scratch/hf timeout 60 sbatch --hold --export=NONE --xmem b.sh
expect_true "--export=NONE: the estimator did not run" [ -f "$R/report" ]
expect_true "--export=NONE: HF_HOME '$(report hf_home)' reached the profile" [ "$(report hf_home)" = "" ]
expect_true "--export=NONE: the preamble's venv was not used" [ "$(report python)" = "$J/venv-b/bin/python" ]
pass "--export=NONE sends no submission variable; the preamble still activates the venv"

# A failing preamble: one line naming it, the job submitted with its original request.
sed "s|$J/venv-a/bin/activate|$J/missing-venv/bin/activate|" "$J/a.sh" >"$J/bad.sh"
as_user timeout 60 sbatch --hold --xmem bad.sh
expect_out "line 6 failed \(status 1\) before the profile: 'source $J/missing-venv/bin/activate'" "failing line named"
expect_out "python3 -m venv" "the fix is named"
expect_out "submitted with its original request" "the job is kept"
expect_true "the failure is not one line" [ "$(grep -c "line 6 failed" <<<"$RUN_OUT")" = 1 ]
expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "a failed preamble: the job keeps its whole GPU (every share of one)"
pass "a failing preamble line is named, and the job keeps its whole GPU"

# With the project's torch 2.x venv (XMEM_VENV), the preamble makes its torch the one profiled.
if [ -n "${XMEM_VENV:-}" ] && runuser -u xmemt1 -- test -r "$XMEM_VENV/bin/activate"; then
    rm -f "$R/report"
    sed -e "s|source $J/venv-a/bin/activate|source $XMEM_VENV/bin/activate|" \
        -e "s|--fake-report=|--fake-torch --fake-report=|" "$J/a.sh" >"$J/t.sh"
    want=$("$XMEM_VENV/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null | tail -n 1)
    as_user timeout 90 sbatch --hold --xmem t.sh
    expect_true "the profile imported torch '$(report torch)', the venv has '$want'" \
        [ "$(report torch)" = "$want" ]
    pass "the venv's torch $want is the one the profile imports"
else
    echo "# XMEM_VENV unset or unreadable by xmemt1: the torch 2.x check is not run"
fi
finish
