#!/usr/bin/env bash
# `module load` in a batch script's preamble, on the lab cluster, submitted by xmemt1: the
# preamble runs in a non-login bash, so xmemd defines `module` from the site's init script
# ($MODULESHOME/init/bash, sent with the job's environment) before the lines that call it.
# A module the login node does not have fails the preamble: one line naming the line and
# 'module avail', and the job keeps its original request. The site's module system here is a
# stand-in whose `module load NAME` appends NAME to LOADEDMODULES and fails for unknown names.
T_NAME=56-slurm-preamble-module
. "$(dirname "$0")/lab/testlib.sh"
t_require_preamble_lab
XMEM_LAB_PROFILER=fake lab_up shard
J=$LAB/jobs
R=$LAB/fake
M=$LAB/jobs/modules

mkdir -p "$M/init"
cat >"$M/init/bash" <<'SH'
# A stand-in for Lmod/Environment Modules: the `module` shell function their init defines.
module() {
    case "$1 $2" in
    "load cuda/12.4" | "load python/3.11") export LOADEDMODULES=${LOADEDMODULES:+$LOADEDMODULES:}$2 ;;
    "purge "*) export LOADEDMODULES= ;;
    load*) echo "Lmod has detected the following error: The following module(s) are unknown: \"$2\"" >&2; return 1 ;;
    esac
}
SH
chmod -R a+rX "$J"
runuser -u xmemt1 -- test -r "$M/init/bash" || t_skip "xmemt1 cannot read $M"

# job MODULE: a script that loads cuda and MODULE before training.
job() {
    cat <<SH
#!/bin/bash
#SBATCH --gres=gpu:1
#SBATCH -o /dev/null
module purge
module load cuda/12.4 && module load $1
python train.py --fake-limit-mb=5000 --fake-report=$R/report
SH
}
touch "$J/train.py"
as_user() { submit_as xmemt1 MODULESHOME="$M" "$@"; }

job python/3.11 >"$J/ok.sh"
as_user timeout 60 sbatch --hold --xmem ok.sh
expect_out "xmem: estimate for A100-40GB" "estimated"
got=$(sed -n 's/^modules=//p' "$R/report" 2>/dev/null)
expect_true "the profile saw LOADEDMODULES='$got'" [ "$got" = "cuda/12.4:python/3.11" ]
expect_no_out "not run before the profile" "module lines are environment lines"
expect_field "$JOB" TresPerNode "gres:shard:2" "the estimate was applied"
pass "module purge/load ran before the profile (LOADEDMODULES=$got)"

job no-such/1.0 >"$J/bad.sh"
as_user timeout 60 sbatch --hold --xmem bad.sh
expect_out "line 5 failed \(status 1\) before the profile: 'module load cuda/12.4 && module load no-such/1.0'" "failing line named"
expect_out "unknown: \"no-such/1.0\"" "what the module system said"
expect_out "module avail" "the fix"
expect_out "submitted with its original request" "the job is kept"
expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "a failed module load: the job keeps its whole GPU (every share of one)"
pass "an unknown module is named with its line, and the job keeps its whole GPU"
finish
