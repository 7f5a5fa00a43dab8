#!/usr/bin/env bash
# Cluster-wide accounting (issue 28, item 3): a lab with slurmdbd over a real MariaDB
# (XMEM_LAB_ACCOUNTING=1, lab/dbd.sh) runs --xmem jobs as root and as xmemt1 (one exits 1,
# one prints a CUDA OOM, is requeued whole and does it again); at each job's end the node writes xmem's record into the job's
# AdminComment ("xmem-acct: {json}", built by xmemd from its ledger row), slurmdbd keeps it,
# and `xmem report --source sacct` gives the same report as `--source ledger` in every
# grouping and format; a requeued job's rerun replaces its first record. The ledger holds the share each job ran on and its part of a GPU, and
# GPU-hours count that part. A user cannot write an AdminComment. A job whose end reaches an
# xmemd that did not estimate it (several login nodes) still gets its record in slurmdbd.
T_NAME=106-slurm-sacct-report
. "$(dirname "$0")/lab/testlib.sh"
. "$(dirname "$0")/58-requeue-common.bash"
t_require_report_lab # REPORT
lab_dbd_available || t_skip "no slurmdbd or mariadb-server (make deps)"
id xmemt1 >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin xmemt1 ||
    fail "cannot create the second user xmemt1"

# The OOM job is requeued once on a whole GPU and runs out of memory again (test 58 covers
# the requeue, and the lab whose slurmctld starts a requeued job again within seconds): its
# rerun's record replaces the first run's, after the requeue mark.
export XMEM_LAB_ACCOUNTING=1
requeue_lab_up
t_report_lab # DB, J; in $J/shared

# The fake profiler estimates LIMIT*0.9 MiB: three sizes, so three shares.
job_script small.sbatch 4000 'sleep 2; exit 0'
job_script mid.sbatch 12000 'sleep 2; exit 1'
job_script big.sbatch 20000 'sleep 2; echo "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2; exit 1'
ids=()
for s in small mid big; do
    submit --xmem -o "$J/shared/$s-%j.out" "$J/shared/$s.sbatch"
    ids+=("$JOB")
done
run runuser -u xmemt1 -- sbatch --xmem -o /dev/null "$J/shared/small.sbatch"
ids+=("$(lab_jobid "$RUN_OUT")")
expect_true "xmemt1's sbatch --xmem submitted nothing" [ -n "${ids[3]}" ]
for id in "${ids[@]}"; do
    lab_wait_state "$id" 90 COMPLETED FAILED || fail "job $id did not finish"
done
want=${#ids[@]}
all=$(IFS=,; echo "${ids[*]}")

# slurmctld hands a finished job to slurmdbd on its own schedule: wait for every record.
sacct_records() {
    timeout 20 sacct -a -X -n -P -j "$all" --format=JobIDRaw,AdminComment 2>/dev/null |
        grep -c 'xmem-acct: {'
}
for _ in $(seq 1 60); do
    [ "$(sacct_records)" = "$want" ] && break
    sleep 1
done
expect_eq "$(sacct_records)" "$want" "jobs whose AdminComment in slurmdbd holds xmem's record"
got=$(sqlite3 "$DB" "select count(*) from jobs where job_id in ($all)")
expect_eq "$got" "$want" "job_end rows in the ledger"
expect_false "a node could not write a record" grep -E "accounting record not written" "$LAB/log/slurmd.log"
pass "$want --xmem jobs (one as xmemt1): the ledger and slurmdbd both hold them"

# 1. The record: one compact JSON after the packing record, built from the ledger row.
comment=$(timeout 20 sacct -a -X -n -P -j "${ids[0]}" --format=AdminComment)
case $comment in
"xmem: estimate="*'; xmem-acct: {'*'"v":1}') ;;
*) fail "the packing record, then xmem's record, expected in: $comment" ;;
esac
row=$(sqlite3 "$DB" "select j.share, j.gpu_fraction, r.limit_bytes, j.elapsed_seconds from jobs j
    join requests r on r.id = j.request_id where j.job_id = ${ids[0]}")
IFS='|' read -r share frac limit el <<<"$row"
python3 - "$comment" "$share" "$frac" "$limit" "$el" <<'PY' || fail "record differs from the ledger row"
import json, sys
comment, share, frac, limit, el = sys.argv[1:]
rec = json.loads(comment.split("xmem-acct: ", 1)[1])
assert rec["share"] == share and abs(rec["frac"] - float(frac)) < 1e-9, (rec, share, frac)
assert rec["limit"] == int(limit) and rec["el"] == int(el) and rec["ok"] == 1, rec
assert " " not in comment.split("xmem-acct: ", 1)[1], "not compact"
print("ok", rec)
PY
# The OOM job: requeued whole after its first run; one record, the rerun's, after the mark.
comment=$(timeout 20 sacct -a -X -n -P -j "${ids[2]}" --format=AdminComment)
expect_eq "$(grep -o 'xmem-acct: ' <<<"$comment" | wc -l)" 1 "records in the requeued job's AdminComment ($comment)"
case $comment in
*"; xmem: requeued after CUDA OOM "*'; xmem-acct: {'*'"frac":1'[.,]*'"rq":1,"share":"shard:10",'*) ;;
*) fail "the requeue mark, then the rerun's record (whole GPU, rq 1), expected in: $comment" ;;
esac
# Each share's part of a GPU: shard:N of the lab's 10 per GPU is N/10.
bad=$(sqlite3 "$DB" "select count(*) from jobs where job_id in ($all) and (share not like 'shard:%'
    or abs(gpu_fraction - cast(substr(share, 7) as real) / 10) > 1e-9)")
expect_eq "$bad" 0 "ledger rows whose share or part of a GPU is wrong"
pass "record $share (part $frac of a GPU) in the AdminComment equals the ledger row; the requeued job's rerun record (shard:10, whole) replaced its first"

# 2. Both sources, every grouping and format: the same report.
for by in user account partition gpu; do
    for fmt in json csv table; do
        "$REPORT" --db "$DB" --source ledger --by "$by" --format "$fmt" >"$LAB/ledger.$by.$fmt" ||
            fail "report --source ledger --by $by"
        "$REPORT" --config "$LAB/etc/xmem.yaml" --source sacct --by "$by" --format "$fmt" \
            >"$LAB/sacct.$by.$fmt" || fail "report --source sacct --by $by"
        cmp -s "$LAB/ledger.$by.$fmt" "$LAB/sacct.$by.$fmt" ||
            fail "--by $by --format $fmt differs: $(diff "$LAB/ledger.$by.$fmt" "$LAB/sacct.$by.$fmt" | head -n 6)"
    done
done
expect_true "the report counts no job" grep -q "\"jobs\":$want," "$LAB/sacct.user.json"
expect_true "no xmemlab account group" grep -q '"xmemlab":' "$LAB/sacct.account.json"
pass "--source sacct equals --source ledger by user, account, partition and gpu, as json, csv and table"

# 3. GPU-hours by the part of a GPU granted; memory·hours saved against whole GPUs.
cap=$(awk '/- name: A100-40GB/{f=1} f&&/total_memory_mib:/{print $2; exit}' "$XMEM_SRC/etc/gpus.yaml")
expect=$(sqlite3 "$DB" "select printf('%.6f %.6f', sum(j.gpu_fraction * j.elapsed_seconds / 3600.0),
    sum((1.0 - j.gpu_fraction) * $cap / 1024.0 * j.elapsed_seconds / 3600.0))
    from jobs j where j.job_id in ($all)")
got=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["total"]; print("%.6f %.6f" % (t["gpu_hours"], t["memory_gib_hours_saved"]))' "$LAB/sacct.user.json")
expect_eq "$got" "$expect" "gpu_hours and memory_gib_hours_saved (report vs ledger recomputed)"
pass "GPU-hours by part granted and GiB-hours saved: $got"

# 4. Only root (or a Slurm operator) writes an AdminComment; bad input is one line.
run runuser -u xmemt1 -- scontrol update JobId="${ids[3]}" AdminComment='xmem-acct: {"v":1}'
expect_true "xmemt1 could update an AdminComment" [ "$RUN_RC" != 0 ]
run "$REPORT" --source slurm
expect_rc 2 "unknown source"
expect_out "^xmem: report: unknown source 'slurm' \(use ledger or sacct\)" "unknown source"
run "$REPORT" --config "$LAB/etc/xmem.yaml" --source sacct --sacct "$LAB/no-sacct"
expect_rc 1 "missing sacct"
expect_out "^xmem: report: cannot run $LAB/no-sacct" "missing sacct"
pass "xmemt1 cannot write an AdminComment; an unknown source or a missing sacct is one line"

# 5. Several login nodes: the xmemd a job's end reaches (the compute node's own) did not
# estimate the job. It runs while xmemd is replaced by one with an empty ledger; that one
# holds no request, and still answers root's report of the packed job with a record made
# from root's words (the node's measurements, the packing record's limit and estimate).
job_script far.sbatch 4000 'sleep 6; exit 0'
submit --xmem -o /dev/null "$J/shared/far.sbatch"
far=$JOB
lab_wait_state "$far" 60 RUNNING || fail "job $far did not start"
far_req=$(sqlite3 "$DB" "select max(id) from requests where kind = 'estimate'")
lab_stop_pidfile "$LAB/run/xmemd.pid"
mv "$DB" "$LAB/state/login-a.sqlite"
rm -f "$DB-wal" "$DB-shm" "$LAB/run/xmemd.sock"
lab_start_xmemd
lab_wait_state "$far" 60 COMPLETED || fail "job $far did not complete"
for _ in $(seq 1 60); do
    comment=$(timeout 20 sacct -a -X -n -P -j "$far" --format=AdminComment)
    case $comment in *'xmem-acct: {'*) break ;; esac
    sleep 1
done
python3 - "$comment" "$far_req" <<'PY' || fail "the record of a job another xmemd estimated: $comment"
import json, sys
comment, req = sys.argv[1], int(sys.argv[2])
packing = comment.split("; ")[0].split()
limit = int(next(w for w in packing if w.startswith("limit="))[6:-1]) << 20
est = int(next(w for w in packing if w.startswith("estimate="))[9:-1]) << 20
rec = json.loads(comment.split("xmem-acct: ", 1)[1])
assert rec["req"] == req and rec["gpu"] == "" and rec["ok"] == 1, rec
assert rec["limit"] == limit and rec["est"] == est and rec["share"].startswith("shard:"), rec
print("ok", rec)
PY
expect_eq "$(sqlite3 "$DB" "select count(*) from jobs")" 0 "rows the second xmemd wrote for a request it does not hold"
"$REPORT" --config "$LAB/etc/xmem.yaml" --source sacct --by user --format json >"$LAB/far.json" ||
    fail "report --source sacct after the second xmemd"
expect_true "the cluster-wide report does not count the job" grep -q "\"jobs\":$((want + 1))," "$LAB/far.json"
pass "a packed job estimated by another xmemd: its record (req $far_req, limit and estimate from root's packing record) in slurmdbd, no row here, and counted by --source sacct"
finish
