#!/usr/bin/env bash
# A burst of 20 sbatch --xmem whose profiles take 20 s (docs/async.md): every sbatch returns
# after the interactive budget, long before its estimate, with the job queued held; xmemd
# then narrows each job through job_submit.lua's slurm_job_modify, and every job runs with the
# share its estimate asks for.
T_NAME=120-slurm-async-burst
. "$(dirname "$0")/lab/testlib.sh"
. "$(dirname "$0")/lab/async.bash"
t_require_async_lab

lab_up shard
cd "$LAB/jobs" || fail "no $LAB/jobs"
# limit -> share size (+10 %) -> shards of 4096 MiB
limits=(2048 4096 8192 12288)
shards=(1 2 3 4)
for i in 0 1 2 3; do slow_script "burst$i.sbatch" "${limits[$i]}" 20; done

# The burst: all 20 at once, each timed.
for n in $(seq 0 19); do
    (
        start=$(date +%s%N)
        out=$(timeout 60 sbatch --xmem -o "$LAB/jobs/burst-$n.out" "burst$((n % 4)).sbatch" 2>&1)
        echo "$(((($(date +%s%N) - start) / 1000000))) $out" >"$LAB/jobs/sbatch-$n.txt"
    ) &
done
wait
slowest=0
for n in $(seq 0 19); do
    read -r ms rest <"$LAB/jobs/sbatch-$n.txt"
    RUN_OUT=$(cat "$LAB/jobs/sbatch-$n.txt")
    ids[n]=$(lab_jobid "${RUN_OUT#* }")
    [ -n "${ids[n]}" ] || fail "sbatch $n submitted nothing: $RUN_OUT"
    expect_out "the job is held until its estimate is ready" "sbatch $n"
    [ "$ms" -gt "$slowest" ] && slowest=$ms
done
# The property, not a timing: each returned before its 20 s profile could have ended.
expect_true "the slowest sbatch took ${slowest} ms, not less than the 20 s profile" [ "$slowest" -lt 15000 ]
pass "20 sbatch returned before their estimates (slowest ${slowest} ms), each told the job is held"
for n in 0 1 2 3; do expect_held "${ids[n]}" "job ${ids[n]} of the burst"; done
pass "the jobs are queued held, as shard:$LAB_SHARDS_PER_GPU with the estimating mark"
run "$XMEM_BUILD/bin/xmem-status" -s "$LAB/run/xmemd.sock"
expect_rc 0 "xmem status"
expect_out "your held jobs wait for:" "xmem status"
expect_out "request [0-9]+ +(profiling|queued|waiting) " "xmem status"
pass "xmem status lists the caller's estimates their held jobs wait for"

for n in $(seq 0 19); do
    lab_wait_state "${ids[n]}" 180 COMPLETED || fail "job ${ids[n]} did not complete"
done
for n in $(seq 0 19); do
    i=$((n % 4))
    expect_field "${ids[n]}" TresPerNode "gres:shard:${shards[$i]}" "job ${ids[n]} (limit ${limits[$i]} MiB)"
    expect_true "job ${ids[n]}: no packing record: $(admin_comment "${ids[n]}")" \
        grep -q "^xmem: estimate=.* limit=${limits[$i]}M .*request=gres:gpu:1->shard:${shards[$i]}$" \
        <<<"$(admin_comment "${ids[n]}")"
    expect_true "job ${ids[n]} did not run: $(cat "$LAB/jobs/burst-$n.out")" grep -q "^ran with" "$LAB/jobs/burst-$n.out"
    expect_true "job ${ids[n]}'s output does not name its share: $(cat "$LAB/jobs/burst-$n.out")" \
        grep -q "^xmem: estimate=.* limit=${limits[$i]}M .*->shard:${shards[$i]}$" "$LAB/jobs/burst-$n.out"
done
pass "all 20 jobs ran with their estimated shares (packing record in root's AdminComment), each output names it"
finish
