#!/usr/bin/env bash
# Accounting at job end on a lab cluster whose slurmstepd samples a fake NVML
# (libxmem-fake-nvml.so through plugstack nvml=PATH; no real GPU here): the ledger gets the
# job's account and partition, its measured peak GPU memory (summed over its processes and
# devices, the largest sum kept, a process outside the job left out) and whether its output
# shows a CUDA OOM (stderr or stdout, not /dev/null, never a file the job's user does not
# own); `xmem report` groups by account and partition from them and fills its measured and
# estimate-error columns and the HTML scatter. Test 75 covers the same plugin without NVML.
T_NAME=76-accounting
. "$(dirname "$0")/lab/testlib.sh"
t_require_lab
REPORT=$XMEM_BUILD/bin/xmem-report
FAKE_NVML=$XMEM_BUILD/lib/libxmem-fake-nvml.so
[ -x "$REPORT" ] || t_skip "no $REPORT (the report is not built)"
[ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"
[ -f "$FAKE_NVML" ] || t_skip "no $FAKE_NVML (the plugin unit tests are not built)"
command -v sqlite3 >/dev/null || t_skip "no sqlite3 CLI (make deps)"
id xmemt1 >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin xmemt1 ||
    fail "cannot create the second user xmemt1"

# A GPU process outside any job, which the fake NVML reports too: no job may count it.
XMEM_FAKE_NVML_MIB=20000 setsid sleep 300 </dev/null >/dev/null 2>&1 &
STRANGER=$!
t_exit_76() {
    local rc=$?
    kill "$STRANGER" 2>/dev/null
    lab_down
    exit $rc
}
trap t_exit_76 EXIT

# oom_requeue=off: these OOM jobs are counted, not requeued (test 58 covers the requeue).
XMEM_PLUGSTACK_ARGS="nvml=$FAKE_NVML nvml_interval_ms=100 oom_requeue=off" XMEM_LAB_PROFILER=fake lab_up shard
expect_true "xmemd did not start" [ "$LAB_XMEMD" = 1 ]
DB=$LAB/state/xmem-ledger.sqlite
J=$LAB/jobs
mkdir -p "$J/shared" "$J/u1/d" "$J/rootdir" && chmod 0777 "$J/shared" && chmod o+x "$LAB" "$J"
chown -R xmemt1 "$J/u1"
echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB" >"$J/rootdir/out.log"
chmod 0755 "$J/rootdir" && chmod 0644 "$J/rootdir/out.log"
cd "$J/shared" || fail "no $J/shared"
echo 'print("training")' >train.py
chmod 0644 train.py

# job_script (testlib.sh): the fake profiler estimates LIMIT*0.9 MiB.
# 3000 MiB on GPU 0 and 2000 MiB on GPU 1 at once: 5000 MiB.
job_script measured.sbatch 8000 'XMEM_FAKE_NVML_MIB=3000 sleep 3 &
XMEM_FAKE_NVML_MIB=2000 XMEM_FAKE_NVML_GPU=1 sleep 3 &
wait'
# 1000, then 6500, then 500 MiB: the peak is 6500 MiB.
job_script growing.sbatch 10000 'f=$PWD/mib.$SLURM_JOB_ID; echo 1000 >$f
XMEM_FAKE_NVML_FILE=$f sleep 4 &
sleep 1.2; echo 6500 >$f; sleep 1.2; echo 500 >$f; wait'
OOM='echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2; exit 1'
job_script oom.sbatch 12000 "$OOM"
job_script oom-null.sbatch 12001 "$OOM"
# xmemt1 swaps its output directory for a link to root's directory, whose out.log shows an
# OOM: slurmstepd (root) must not read it.
job_script swap.sbatch 4000 "cd $J/u1 && mv d d.old && ln -s $J/rootdir d"

declare -A ids
submit --xmem -A physics -o "$J/shared/measured.out" "$J/shared/measured.sbatch"; ids[measured]=$JOB
submit --xmem -o "$J/shared/growing.out" "$J/shared/growing.sbatch"; ids[growing]=$JOB
submit --xmem -o "$J/shared/oom.out" -e "$J/shared/oom.err" "$J/shared/oom.sbatch"; ids[oom]=$JOB
submit --xmem -o /dev/null "$J/shared/oom-null.sbatch"; ids[oom_null]=$JOB
run runuser -u xmemt1 -- sbatch --xmem -o "$J/u1/own-%j.out" "$J/shared/oom.sbatch"
ids[u1_oom]=$(lab_jobid "$RUN_OUT")
run runuser -u xmemt1 -- sbatch --xmem -o "$J/u1/d/out.log" "$J/shared/swap.sbatch"
ids[u1_swap]=$(lab_jobid "$RUN_OUT")
for k in "${!ids[@]}"; do
    expect_true "job $k was not submitted" [ -n "${ids[$k]}" ]
done
for k in "${!ids[@]}"; do
    lab_wait_state "${ids[$k]}" 90 COMPLETED FAILED || fail "job $k (${ids[$k]}) did not finish"
done
want=${#ids[@]}
all=$(IFS=,; echo "${ids[*]}")
for _ in $(seq 1 60); do
    got=$(sqlite3 "$DB" "select count(*) from jobs where job_id in ($all)")
    [ "$got" = "$want" ] && break
    sleep 0.5
done
expect_true "job_end rows: $got of $want in the ledger" [ "$got" = "$want" ]
pass "$want --xmem jobs (two as xmemt1) reached the ledger"

row() { # row NAME COLUMNS
    sqlite3 "$DB" "select $2 from jobs where job_id=${ids[$1]}"
}
expect_row() { # expect_row NAME COLUMNS VALUE WHAT
    local got
    got=$(row "$1" "$2")
    expect_true "$4: job $1 (${ids[$1]}) $2 = '$got', expected '$3'" [ "$got" = "$3" ]
}

# 1. Account and partition, from slurmstepd at job end (no job named a partition at
#    submission, so 'debug' can only come from there).
expect_row measured "account||'|'||partition" "physics|debug" "account and partition"
expect_row growing "coalesce(account,'NULL')||'|'||partition" "NULL|debug" "no account"
expect_row u1_swap "coalesce(account,'NULL')||'|'||partition" "NULL|debug" "xmemt1's partition"
pass "account physics and partition debug recorded; no account is NULL"

# 2. Measured peaks: summed over processes and GPUs, the largest sum, strangers left out.
expect_row measured measured_peak_bytes $((5000 << 20)) "sum over GPUs 0 and 1"
expect_row growing measured_peak_bytes $((6500 << 20)) "largest sample"
for k in oom oom_null u1_oom u1_swap; do
    expect_row "$k" "coalesce(measured_peak_bytes,'NULL')" NULL "a job with no GPU process"
done
pass "measured peak 5000 MiB (3000 + 2000 on two GPUs) and 6500 MiB (the peak of 1000/6500/500); the 20000 MiB stranger in no job"

# 3. CUDA OOM from the job's own files only.
expect_row oom cuda_oom 1 "OOM on stderr (-e)"
expect_row u1_oom cuda_oom 1 "OOM in xmemt1's own output"
expect_row oom_null cuda_oom 0 "output to /dev/null"
expect_row measured cuda_oom 0 "clean job"
expect_row u1_swap cuda_oom 0 "output path swapped for root's file"
pass "CUDA OOM seen on stderr and in a user's output; not for /dev/null or a root-owned file behind a swapped directory"
expect_false "slurmstepd could not report or scan a job" \
    grep -E "xmem: job [0-9]+ (end not recorded|: output not scanned)" "$LAB/log/slurmd.log"

# 4. The report: account and partition groups, measured columns, the scatter.
for by in account partition user; do
    "$REPORT" --db "$DB" --by "$by" --format json >"$LAB/$by.json" || fail "report --by $by"
done
"$REPORT" --db "$DB" --format html -o "$LAB/report.html" || fail "html"
expect=$(sqlite3 "$DB" "select printf('%.3f %.2f %d', sum(j.measured_peak_bytes) / 1073741824.0,
    100.0 * avg(abs(r.peak_bytes - j.measured_peak_bytes) * 1.0 / j.measured_peak_bytes), count(*))
    from jobs j join requests r on r.id = j.request_id where j.measured_peak_bytes is not null")
python3 - "$LAB" "$want" "$expect" <<'PY' || fail "report figures"
import json, re, sys
lab, want, (gib, err, n) = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
acc = json.load(open(f"{lab}/account.json"))
part = json.load(open(f"{lab}/partition.json"))
t = acc["total"]
assert t["jobs"] == want and t["failed"] == 3 and t["oom_after_packing"] == 2, t
assert acc["groups"]["physics"]["jobs"] == 1, acc["groups"]
assert acc["groups"]["(unknown)"]["jobs"] == want - 1, acc["groups"]
assert list(part["groups"]) == ["debug"] and part["groups"]["debug"]["jobs"] == want, part["groups"]
assert t["measured_jobs"] == int(n) == 2, t
assert abs(t["measured_gib"] - float(gib)) < 1e-3, (t, gib)
assert abs(t["estimate_error_pct"] - float(err)) < 1e-2, (t, err)
assert abs(acc["groups"]["physics"]["estimate_error_pct"] - 44.0) < 1e-2, acc["groups"]["physics"]
pairs = sorted(acc["estimate_vs_measured_gib"])
assert [round(m, 3) for _, m in pairs] == [round(5000 / 1024, 3), round(6500 / 1024, 3)], pairs
html = open(f"{lab}/report.html").read()
svg = re.search(r'<svg id="accuracy".*?</svg>', html).group(0)
assert len(re.findall(r'<circle class="point"', svg)) == 2, svg
assert "no measured peaks" not in svg, svg
print("ok", t)
PY
pass "report: account and partition groups, measured $(cut -d' ' -f1 <<<"$expect") GiB, estimate error $(cut -d' ' -f2 <<<"$expect") %, two points in the HTML scatter"
finish
