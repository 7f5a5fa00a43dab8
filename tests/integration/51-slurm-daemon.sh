#!/usr/bin/env bash
# sbatch --xmem against a real xmemd (lab's deterministic fake profiler: the estimate is
# whatever --fake-limit-mb says): scanned and #XMEM entrypoints, --xmem=check, an estimate
# larger than the GPU, two jobs packed on one GPU, job-end accounting in the ledger, and
# never losing a job when the daemon is killed mid-request or hangs (20 submissions each).
T_NAME=51-slurm-daemon
. "$(dirname "$0")/lab/testlib.sh"
t_require_lab
[ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"
XMEM_LAB_PROFILER=fake lab_up shard
expect_true "xmemd did not start" [ "$LAB_XMEMD" = 1 ]
J=$LAB/jobs
cd "$J" || fail "no $J"
cat >"$J/train.py" <<'PY'
import os
print("training with", os.environ.get("SLURM_SHARDS_ON_NODE"), "shards, limit",
      os.environ.get("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"))
PY

# The jobs print their id first, then their limit and share, and hold for $HOLD_S.
first='echo "job $SLURM_JOB_ID"'
body='printenv CUDA_MPS_PINNED_DEVICE_MEM_LIMIT SLURM_SHARDS_ON_NODE
sleep "${HOLD_S:-0}"'

# 1. Scanned entrypoint: 8000 MiB + 10% on 4096-MiB shards = shard:3.
job_script "$J/a.sbatch" 8000 "$body" "$first"
submit --xmem -o "$J/%j.out" "$J/a.sbatch"
expect_out "xmem: profiling 'python3 train.py --fake-limit-mb=8000' \(from $J/a.sbatch line 4\)" "profiling message"
expect_out "xmem: estimate for A100-40GB: peak 7200 MiB, limit 8000 MiB" "estimate message"
expect_out "xmem: requesting shard:3 instead of one whole GPU \(limit 8000 MiB \+ 10% margin = share size 8800 MiB of the .*: shard:3\)" "the share line"
expect_one_limit "job $JOB" "$RUN_OUT
$(lab_comment "$JOB")"
expect_field "$JOB" TresPerNode gres:shard:3 "sbatch --xmem"
expect_true "comment: $(lab_comment "$JOB")" \
    grep -q "xmem: estimate=7200M limit=8000M policy=shard request=gres:gpu:1->shard:3" <<<"$(lab_comment "$JOB")"
lab_wait_state "$JOB" 30 COMPLETED || fail "job did not complete"
expect_true "no MPS limit in the task: $(cat "$J/$JOB.out")" grep -qx "0=8000M" "$J/$JOB.out"
first=$JOB
pass "sbatch --gres=gpu:1 --xmem: estimate, shard:3, comment, task limit"

# 1b. srun outside a job profiles its own command; the step runs on the share with the
#     limit, and slurmstepd reports the end of the job it created.
run srun --gres=gpu:1 --xmem python3 train.py --fake-limit-mb=8000
expect_rc 0 "srun --xmem"
expect_out "xmem: profiling 'python3 train.py --fake-limit-mb=8000' \(from the srun command line\)" "srun profiling message"
expect_out "^training with 3 shards, limit 0=8000M$" "srun step share and limit"
srun_job=$(timeout 10 squeue -h -t all -o "%i %k" | sed -n 's/^\([0-9]*\) xmem: estimate=7200M limit=8000M.*/\1/p' | tail -n 1)
expect_true "srun job not found with its xmem comment" [ -n "$srun_job" ]
pass "srun --gres=gpu:1 --xmem python3 train.py: shard:3 and a 8000M limit in the step"

# 2. #SBATCH --xmem with an #XMEM directive naming the command.
job_script "$J/b.sbatch" 20000 "$body" "#XMEM python3 train.py --fake-limit-mb=20000
$first"
sed -i '2a #SBATCH --xmem' "$J/b.sbatch"
submit --hold "$J/b.sbatch"
expect_out "\(from $J/b.sbatch line 4 \(#XMEM\)\)" "directive message"
expect_field "$JOB" TresPerNode gres:shard:6 "#SBATCH --xmem + #XMEM"
pass "#SBATCH --xmem with #XMEM: shard:6"

# 3. --xmem=check reports and changes nothing.
submit --hold --xmem=check "$J/a.sbatch"
expect_out "xmem: --xmem=check: the job is not packed; it keeps its whole GPU" "check message"
expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "--xmem=check (a whole GPU, as every share)"
expect_true "check comment: $(lab_comment "$JOB")" grep -q "policy=shard request=gres:gpu:1 (check only)" <<<"$(lab_comment "$JOB")"
pass "--xmem=check: estimate reported, not packed"

# 4. An estimate larger than the GPU keeps its whole GPU, with a warning.
job_script "$J/big.sbatch" 50000 "$body" "$first"
submit --hold --xmem "$J/big.sbatch"
expect_out "xmem: warning: the limit \(50000 MiB\) does not fit the GPU" "plugin warning"
expect_out "xmem: warning: limit 50000 MiB \+ 10% margin = share size 55000 MiB, above .* keeps its whole GPU" "controller warning"
expect_field "$JOB" TresPerNode "$(lab_whole_gres)" "estimate > GPU"
pass "estimate larger than the GPU: whole GPU (every share of one) kept with a warning"

# 5. Two resized jobs run at once on one GPU.
job_script "$J/pack.sbatch" 16000 "$body" "$first"
export HOLD_S=6
submit --xmem -o /dev/null "$J/pack.sbatch"
a=$JOB
submit --xmem -o /dev/null "$J/pack.sbatch"
b=$JOB
unset HOLD_S
lab_wait_state "$a" 20 RUNNING || fail "first packed job not running"
lab_wait_state "$b" 20 RUNNING || fail "second packed job not running beside the first"
expect_true "not on one GPU: $(gpu_of "$a") / $(gpu_of "$b")" [ "$(gpu_of "$a")" = "$(gpu_of "$b")" ]
pass "two shard jobs run at once on one GPU ($(gpu_of "$a"))"

# 6. Job-end accounting: the finished job's exit status and time are in the ledger.
if command -v sqlite3 >/dev/null; then
    row=$(sqlite3 "$LAB/state/xmem-ledger.sqlite" "select exit_status from jobs where job_id=$first" 2>&1)
    expect_true "job $first end not in the ledger: '$row'" [ "$row" = 0 ]
    row=$(sqlite3 "$LAB/state/xmem-ledger.sqlite" "select exit_status from jobs where job_id=$srun_job" 2>&1)
    expect_true "srun job $srun_job end not in the ledger: '$row'" [ "$row" = 0 ]
    pass "job ends of batch job $first and srun job $srun_job recorded by slurmstepd in xmemd's ledger"
    # Issue 15, finding 11: the request id a job end names comes from the job's environment,
    # which its user sets. A second user's job naming root's request is not attached to it:
    # slurmstepd sends the job's uid, and xmemd refuses a request of another uid.
    if id xmemt1 >/dev/null 2>&1; then
        rid=$(sqlite3 "$LAB/state/xmem-ledger.sqlite" "select request_id from jobs where job_id=$first")
        submit_as xmemt1 sbatch --export=ALL,SLURM_SPANK_XMEM_REQUEST_ID="$rid" -o /dev/null --wrap true
        lab_wait_state "$JOB" 30 COMPLETED || fail "xmemt1's job did not complete"
        for _ in $(seq 50); do
            grep -q "job $JOB end not recorded" "$LAB/log/slurmd.log" && break
            sleep 0.1
        done
        expect_true "xmemt1's job end naming root's request $rid: not refused as another uid's: $(grep "job $JOB " "$LAB/log/slurmd.log" | tail -n 2)" \
            grep -q "must come from its owner or root, for a job its owner ran (uid $(id -u xmemt1)" <<<"$(grep "job $JOB end not recorded" "$LAB/log/slurmd.log")"
        row=$(sqlite3 "$LAB/state/xmem-ledger.sqlite" "select count(*) from jobs where job_id=$JOB")
        expect_true "xmemt1's job $JOB was attached to root's request $rid" [ "$row" = 0 ]
        pass "a job end naming another user's request is refused (slurmstepd sends the job's uid)"
    fi
fi

# parallel_submit N SCRIPT [ENV...]: N concurrent sbatch --xmem; all must be queued, gpu:1.
parallel_submit() {
    local n=$1 script=$2 i id out pids=()
    shift 2
    rm -rf "$J/par" && mkdir -p "$J/par"
    for i in $(seq 1 "$n"); do
        env "$@" timeout 120 sbatch --hold --xmem "$script" >"$J/par/$i" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
    for i in $(seq 1 "$n"); do
        out=$(cat "$J/par/$i")
        id=$(lab_jobid "$out")
        expect_true "submission $i lost: $out" [ -n "$id" ]
        expect_true "submission $i: no warning: $out" \
            grep -q "the job is submitted with its original request" <<<"$out"
        expect_field "$id" TresPerNode "$(lab_whole_gres)" "submission $i"
    done
}

# 7. Killed mid-request: 20 submissions wait on slow profiles; xmemd is SIGKILLed.
job_script "$J/slow.sbatch" 3000 "$body" "$first"
sed -i 's/--fake-limit-mb=3000/--fake-limit-mb=3000 --fake-sleep=30/' "$J/slow.sbatch"
pid=$(cat "$LAB/run/xmemd.pid")
(sleep 2 && kill -KILL "$pid") &
killer=$!
parallel_submit 20 "$J/slow.sbatch"
wait "$killer"
pass "xmemd killed mid-request: 20/20 queued with their whole GPU"

# 8. Hung: xmemd stopped (SIGSTOP) accepts connections but never answers; timeout=3.
rm -f "$LAB/run/xmemd.sock" "$LAB/run/xmemd.lock"
lab_start_xmemd
mkdir -p "$LAB/alt"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$LAB/alt/plugstack.conf|" "$LAB/etc/slurm.conf" >"$LAB/alt/slurm.conf"
cp "$LAB/etc/cli_filter.lua" "$LAB/etc/xmem_lib.lua" "$LAB/etc/xmem_policy.lua" "$LAB/alt/"
echo "required $LAB/lib/xmem.so socket=$LAB/run/xmemd.sock timeout=3" >"$LAB/alt/plugstack.conf"
kill -STOP "$(cat "$LAB/run/xmemd.pid")"
start=$(date +%s)
parallel_submit 20 "$J/a.sbatch" SLURM_CONF="$LAB/alt/slurm.conf"
kill -CONT "$(cat "$LAB/run/xmemd.pid")"
secs=$(($(date +%s) - start))
expect_true "hung daemon held submissions for ${secs}s (deadline 3 s)" [ "$secs" -lt 60 ]
pass "xmemd hung: 20/20 queued with their whole GPU within ${secs}s"
finish
