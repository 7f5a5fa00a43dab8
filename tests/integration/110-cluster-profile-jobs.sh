#!/usr/bin/env bash
# Profiles as Slurm jobs on the lab cluster (XMEM_LAB_CLUSTER=1, docs/profile-jobs.md): with
# profile_partition: cpu, xmemd's exact-mode profile of a second user's (xmemt1) job runs as
# that user on the CPU node cpu1, in partition cpu, under the sandbox's limits (srun passes
# them on) and within the partition's time limit; the estimate comes back and sizes the job
# as a local profile would. A profile job cancelled under it ends as a local profile killed
# does: profile_failed, and the job is queued with its own request. Fast mode stays on the
# login node unless profile_partition_fast says otherwise. The profile is the real
# xmem-estimate (--mode exact, then auto) on a tiny torch model whose code writes down where
# it ran.
T_NAME=110-cluster-profile-jobs
. "$(dirname "$0")/lab/testlib.sh"
t_profile_jobs_lab
J=$LAB/jobs
R=$LAB/fake
uid=$(id -u xmemt1)

# The model's code runs for real in an exact profile: it says where, as whom, under what.
t_tiny_train "$J/train.py" "with open('$R/where-%d' % os.getpid(), 'w') as f:
    print(os.environ.get('SLURMD_NODENAME', 'login'), os.environ.get('SLURM_JOB_PARTITION', '-'),
          os.getuid(), resource.getrlimit(resource.RLIMIT_AS)[0], file=f)
if '--slow' in sys.argv:
    time.sleep(300)"
job() { printf '#!/bin/bash\n#SBATCH --gres=gpu:1\n#SBATCH -o /dev/null\npython3 train.py %s\n' "$1"; }
job "" >"$J/fast.sh"
job --slow >"$J/slow.sh"
chmod -R a+rX "$J"

submit_as xmemt1 timeout 600 sbatch --hold --xmem fast.sh
expect_rc 0 "sbatch of the profiled job"
expect_out "xmem: estimate for A100-40GB: peak [0-9.]+ [MG]iB, limit [0-9.]+ [MG]iB" "estimate from the profile job"
expect_field "$JOB" TresPerNode "gres:shard:1" "a tiny model's share"
where=$(cat "$R"/where-* 2>/dev/null)
expect_true "the profile wrote nothing: where=$where" [ -n "$where" ]
read -r node partition run_uid as_limit <<<"$where"
expect_true "the profile ran on '$node' in '$partition', not cpu1 in cpu" [ "$node $partition" = "cpu1 cpu" ]
expect_true "the profile ran as uid $run_uid, not xmemt1's $uid" [ "$run_uid" = "$uid" ]
expect_true "the profile's RLIMIT_AS is $as_limit, not the sandbox's 16384 MiB" \
    [ "$as_limit" = $((16384 * 1048576)) ]
# Slurm's record of it: the user's, in partition cpu, within its MaxTime of 30 minutes.
line=$(timeout 10 squeue -h -t all -u xmemt1 -p cpu -o '%j %u %N %l %T' | grep '^xmem-profile-')
read -r name user jnode limit state <<<"$line"
expect_true "no profile job in Slurm's records: '$line'" [ -n "$name" ]
expect_true "profile job $name: user $user node $jnode state $state" \
    [ "$user $jnode $state" = "xmemt1 cpu1 COMPLETED" ]
minutes=$(awk -F: '{ print (NF == 3 ? $1 * 60 + $2 : $1) }' <<<"$limit") # [H:]M:S
expect_true "profile job time limit $limit is beyond the partition's 30 minutes" [ "$minutes" -le 30 ]
pass "exact profile ran as xmemt1 on cpu1 (partition cpu, limit $limit): $name"

# Cancelled under it: the same outcome as a local profile killed by a signal.
rm -f "$R"/where-*
( submit_as xmemt1 timeout 600 sbatch --hold --xmem slow.sh; echo "$RUN_OUT" >"$R/slow.out" ) &
bg=$!
lab_wait_for 120 sh -c "ls $R/where-* >/dev/null 2>&1" || fail "the slow profile never started"
slow=$(timeout 10 squeue -h -u xmemt1 -p cpu -t R -o '%i %j' | awk '$2 ~ /^xmem-profile-/ { print $1 }')
expect_true "no running profile job to cancel" [ -n "$slow" ]
timeout 10 scancel "$slow"
wait "$bg"
out=$(cat "$R/slow.out")
echo "$out" >&2
expect_true "a cancelled profile job did not fail the estimate: $out" \
    grep -q "xmem: no estimate for .*the estimator failed.*CANCELLED.*original request" <<<"$out"
JOB=$(lab_jobid "$out")
expect_true "the job was lost after its profile was cancelled: $out" [ -n "$JOB" ]
expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "a job whose profile job was cancelled (its whole GPU, as every share)"
pass "cancelled profile job: the job is queued with its whole GPU"

# Fast mode (the estimator's default, auto) stays on the login node unless the site says
# profile_partition_fast: true. Each config is loaded by SIGHUP; a new --width each time
# makes a new cache key.
# reload_with SED: the lab's xmem.yaml edited by SED, reloaded by xmemd.
reload_with() {
    local n
    n=$(grep -c "SIGHUP: reloaded" "$LAB/log/xmemd.log")
    sed -i "$1" "$LAB/etc/xmem.yaml"
    kill -HUP "$(cat "$LAB/run/xmemd.pid")"
    lab_wait_for 20 sh -c "[ \$(grep -c 'SIGHUP: reloaded' $LAB/log/xmemd.log) -gt $n ]" ||
        fail "xmemd did not reload $LAB/etc/xmem.yaml"
}
# fast_where WIDTH: submits a job at that width; WHERE = the nodes its profile ran on.
fast_where() {
    rm -f "$R"/where-*
    job "--width $1" >"$J/w$1.sh"
    chmod a+r "$J/w$1.sh"
    submit_as xmemt1 timeout 600 sbatch --hold --xmem "w$1.sh"
    expect_out "xmem: estimate for A100-40GB" "estimate at width $1"
    WHERE=$(cat "$R"/where-* 2>/dev/null | awk '{ print $1 }' | sort -u | tr '\n' ' ')
}
reload_with 's/, --mode, exact\]/]/'
expect_true "auto mode after the reload" grep -q "xmem-estimate, --json\]" "$LAB/etc/xmem.yaml"
fast_where 32
expect_true "fast mode ran on '$WHERE', not the login node alone" [ "$WHERE" = "login " ]
reload_with '$a profile_partition_fast: true'
fast_where 48
expect_true "fast mode with profile_partition_fast ran on '$WHERE', not cpu1" [ "$WHERE" = "cpu1 " ]
pass "fast mode on the login node by default, on cpu1 with profile_partition_fast"
finish
