#!/usr/bin/env bash
# Packing on the lab's fake GPUs, which enforce their capacity (lab/fake-gpu.sh; issue 31's
# fixed workload, the outcome checked exactly). Ten sbatch --xmem jobs on one node's two
# GPUs of 40960 MiB: each estimate's limit is 7000 MiB, so each job gets shard:2 (7000 MiB
# + 10 % = 7700 MiB, two shards of 4053.6 MiB) and five pack on each GPU. Nine hold their
# true peak, 6500 MiB. The tenth's estimate is under its true peak, 16000 MiB; it starts
# last, on the GPU where four others hold 26000 MiB; a shard job on a node without MPS is
# held by nothing but the GPU, so 26000 + 16000 > 40960 runs it out of memory. The plugin
# requeues it whole (shard:10), where it completes alone. No job is lost. The fake GPU's use
# reaches xmem's ledger through the fake NVML (plugstack nvml=), as a GPU's through NVML.
T_NAME=124-slurm-packing
. "$(dirname "$0")/lab/testlib.sh"
. "$(dirname "$0")/58-requeue-common.bash"
. "$(dirname "$0")/lab/packing.bash"
t_require_lab
[ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"

FAKE_NVML=$XMEM_BUILD/lib/libxmem-fake-nvml.so
[ -f "$FAKE_NVML" ] || t_skip "no $FAKE_NVML (the plugin unit tests are not built)"
command -v sqlite3 >/dev/null || t_skip "no sqlite3 CLI (make deps)"
# 32 cores a node: a job takes a core, and ten must run at once.
XMEM_PLUGSTACK_ARGS="nvml=$FAKE_NVML nvml_interval_ms=200" XMEM_LAB_CPUS=32 requeue_lab_up shard
packing_train_py "$J"
node=$(packing_node)
[ -n "$node" ] || fail "no node in partition debug"
EVENTS=$LAB/gpu/events

for i in $(seq 1 9); do packing_script "$J/fits$i.sbatch" 7000 6500 30; done
packing_script "$J/under.sbatch" 7000 16000 4
ids=()
for i in $(seq 1 9); do
    submit --xmem -w "$node" -o "$J/fits$i.out" "$J/fits$i.sbatch"
    ids+=("$JOB")
done
# The tenth starts after the nine hold their memory: it is the one that allocates last.
lab_wait_for 60 sh -c "[ \$(grep -c ' start ' '$EVENTS' 2>/dev/null) -ge 9 ]" ||
    fail "the nine jobs did not all start: $(cat "$EVENTS" 2>/dev/null)"
# append: Slurm truncates the output when the requeued job starts again (docs/enforcement.md)
submit --xmem -w "$node" --open-mode=append -o "$J/under.out" "$J/under.sbatch"
under=$JOB

for job in "${ids[@]}" "$under"; do
    lab_wait_state "$job" 150 COMPLETED FAILED CANCELLED || fail "job $job did not end"
done

# Which jobs packed: every job asked for shard:2; the nine ran on them (the events' share).
for job in "${ids[@]}"; do
    expect_field "$job" JobState COMPLETED "job $job"
    expect_field "$job" TresPerNode gres:shard:2 "job $job's share"
    expect_field "$job" Restarts 0 "job $job"
done
expect_eq "$(awk '$3 == "start" && $8 == "shard:2"' "$EVENTS" | wc -l)" 9 "runs that held memory on shard:2"
pass "nine jobs ran packed on shard:2 and completed"

# How many per GPU at the peak: five on one GPU (32500 MiB), four on the other (26000 MiB).
peaks() { # the most jobs and MiB held at once on each GPU, "jobs MiB" sorted
    awk '$3 == "start" { n[$2]++; if (n[$2] > top[$2]) top[$2] = n[$2]; if ($7 > mib[$2]) mib[$2] = $7 }
         $3 == "end" { n[$2]-- }
         END { for (g in top) print top[g], mib[g] }' "$EVENTS" | sort -n | tr '\n' ' '
}
expect_eq "$(peaks)" "4 26000 5 32500 " "per GPU at the peak: jobs and MiB held"
expect_eq "$(awk '{print $2}' "$EVENTS" | sort -u | grep -c "^$node\.nvidia[01]$")" 2 "GPUs used, both on $node"
pass "at the peak five jobs held 32500 MiB on one GPU and four 26000 MiB on the other"

# Which one ran out of memory: the tenth, on its first run, against its neighbours.
expect_eq "$(awk '$3 == "oom" {print $4, $5, $6, $7, $8}' "$EVENTS")" "$under 0 16000 14960 shard:2" \
    "the one OOM (job, run, MiB asked, MiB free, share)"
expect_true "job $under's output lacks PyTorch's OOM message: $(cat "$J/under.out")" \
    grep -q "CUDA out of memory. Tried to allocate 16000 MiB.* Its neighbours on .* hold 26000 MiB" "$J/under.out"
pass "job $under, estimated under its true peak, ran out of memory on shard:2 beside four neighbours"

# Requeued once, whole, and completed alone on its GPU.
expect_field "$under" JobState COMPLETED "the requeued job"
expect_field "$under" Restarts 1 "the requeued job"
expect_field "$under" TresPerNode gres:shard:10 "the rerun's share (a whole GPU)"
expect_eq "$(awk -v j="$under" '$3 == "start" && $4 == j {print $5, $7, $8}' "$EVENTS")" "1 16000 shard:10" \
    "the rerun held 16000 MiB alone on shard:10"
expect_true "job $under's output lacks xmem's requeue line: $(cat "$J/under.out")" \
    grep -q "^xmem: the first run on gres:shard:2 (limit 7000 MiB) ran out of GPU memory; xmem requeued the job once with a whole GPU" "$J/under.out"
pass "job $under was requeued whole (shard:10) and completed alone"

expect_eq "$(awk '$3 == "end"' "$EVENTS" | wc -l)" 10 "runs that ended holding memory"
# The ledger's measured peaks (MiB), each job's true one: the nine's, then the rerun's.
all=$(IFS=,; echo "${ids[*]},$under")
measured() { sqlite3 "$LAB/state/xmem-ledger.sqlite" "SELECT group_concat(measured_peak_bytes / 1048576, ' ') FROM (SELECT measured_peak_bytes FROM jobs WHERE job_id IN ($all) ORDER BY job_id)"; }
lab_wait_for 30 sh -c "[ \"\$(sqlite3 '$LAB/state/xmem-ledger.sqlite' 'SELECT count(measured_peak_bytes) FROM jobs WHERE job_id IN ($all)')\" = 10 ]"
expect_eq "$(measured)" "6500 6500 6500 6500 6500 6500 6500 6500 6500 16000" "measured peaks in the ledger"
pass "ten jobs submitted, ten completed, none lost"
finish
