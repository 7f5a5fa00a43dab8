#!/usr/bin/env bash
# Sweeps with profile jobs (docs/profile-jobs.md, "Sweeps"): on the lab cluster, with
# profile_partition: cpu, three identical submissions at once and one with an argument
# changed cost two profile jobs in partition cpu, not four: identical requests share one
# profile (leaders.cpp) or hit the cache, and every submission gets its estimate.
T_NAME=111-cluster-sweep-dedup
. "$(dirname "$0")/lab/testlib.sh"
t_profile_jobs_lab
J=$LAB/jobs
R=$LAB/fake

# Long enough for the identical requests to meet at one profile.
t_tiny_train "$J/train.py" "time.sleep(5)"
for w in 64 128; do
    printf '#!/bin/bash\n#SBATCH --gres=gpu:1\n#SBATCH -o /dev/null\npython3 train.py --width %s\n' "$w" >"$J/w$w.sh"
done
chmod -R a+rX "$J"

pids=()
for s in w64 w64 w64 w128; do
    i=${#pids[@]}
    (submit_as xmemt1 timeout 600 sbatch --hold --xmem "$s.sh"; echo "$RUN_OUT" >"$R/out.$i") &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for i in 0 1 2 3; do
    expect_true "submission $i got no estimate: $(cat "$R/out.$i")" \
        grep -qE "xmem: estimate for A100-40GB: peak [0-9.]+ [MG]iB" "$R/out.$i"
done
jobs=$(timeout 10 squeue -h -t all -u xmemt1 -p cpu -o '%j' | grep -c '^xmem-profile-')
expect_true "four submissions, two distinct, made $jobs profile jobs (want 2)" [ "$jobs" = 2 ]
pass "3 identical + 1 changed submission: 2 profile jobs"
finish
