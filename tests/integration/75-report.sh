#!/usr/bin/env bash
# xmem report on a ledger that real jobs wrote: a lab cluster (fake profiler), --xmem jobs
# from root and from a second user, one exiting 1 and one printing a CUDA OOM and exiting 1;
# then totals add up across groupings and match the ledger recomputed here with sqlite3,
# failures are counted, bad input is one line, and the HTML page renders in headless
# Chromium with the same figures as the JSON. Without NVML no peak is measured (test 76 has
# the measured side, account and partition, and CUDA OOM detection).
T_NAME=75-report
. "$(dirname "$0")/lab/testlib.sh"
t_require_report_lab # REPORT
XMEM_LAB_PROFILER=fake lab_up shard
t_report_lab # DB, J; in $J/shared

job_script ok.sbatch 8000 'sleep 2; exit 0'
job_script fail.sbatch 12000 'sleep 2; exit 1'
job_script oom.sbatch 16000 'sleep 2; echo "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2; exit 1'

ids=()
for s in ok ok fail oom; do
    submit --xmem -o /dev/null "$J/shared/$s.sbatch"
    ids+=("$JOB")
done
failing=2
# A second user, created as the daemon tests do when the machine lacks it.
id xmemt1 >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin xmemt1 ||
    fail "cannot create the second user xmemt1"
second_user=""
if id xmemt1 >/dev/null 2>&1; then
    run runuser -u xmemt1 -- sbatch --xmem -o /dev/null "$J/shared/ok.sbatch"
    id1=$(lab_jobid "$RUN_OUT")
    expect_true "xmemt1's sbatch --xmem submitted nothing" [ -n "$id1" ]
    ids+=("$id1")
    second_user=xmemt1
fi
for id in "${ids[@]}"; do
    lab_wait_state "$id" 60 COMPLETED FAILED || fail "job $id did not finish"
done
want=${#ids[@]}
for _ in $(seq 1 60); do
    got=$(sqlite3 "$DB" "select count(*) from jobs where job_id in ($(IFS=,; echo "${ids[*]}"))")
    [ "$got" = "$want" ] && break
    sleep 0.5
done
expect_true "job_end rows: $got of $want in the ledger" [ "$got" = "$want" ]
pass "$want --xmem jobs ran${second_user:+ (one as $second_user)} and reached the ledger"

# No NVML here (plugstack.conf names none and the default libnvidia-ml.so.1 is absent): no
# measured peak, and nothing about it in slurmd's log (the reason is a debug line). Test 76
# covers a node with (fake) NVML.
if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
    got=$(sqlite3 "$DB" "select count(*) from jobs where measured_peak_bytes is null")
    expect_true "measured peaks without NVML: $((want - got)) rows have one" [ "$got" = "$want" ]
    expect_false "slurmd's log mentions NVML on a node without it" grep -i nvml "$LAB/log/slurmd.log"
    pass "no NVML: measured_peak_bytes stays NULL and nothing is logged"
fi

# 1. Totals add up across groupings and equal the ledger recomputed with sqlite3.
for by in user account partition gpu; do
    "$REPORT" --db "$DB" --by "$by" --format json >"$LAB/$by.json" || fail "report --by $by"
done
python3 - "$LAB" "$want" "$failing" "$second_user" <<'PY' || fail "totals do not add up"
import json, sys
lab, want, failing, second = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
reports = {by: json.load(open(f"{lab}/{by}.json")) for by in ("user", "account", "partition", "gpu")}
total = reports["user"]["total"]
assert total["jobs"] == want, total
assert total["failed"] == failing, total
assert total["packed"] == want, total  # every job got a share (all estimates fit A100-40GB)
for by, r in reports.items():
    assert r["total"] == total, (by, r["total"], total)
    for key in ("jobs", "packed", "failed", "oom_after_packing"):
        assert sum(g[key] for g in r["groups"].values()) == total[key], (by, key)
    for key in ("gpu_hours_freed", "limit_gib", "requested_gib", "estimated_gib"):
        s = sum(g[key] for g in r["groups"].values())
        assert abs(s - total[key]) < 1e-3, (by, key, s, total[key])
users = reports["user"]["groups"]
assert users["root"]["failed"] == failing, users
if second:
    assert users[second]["jobs"] == 1 and users[second]["failed"] == 0, users
assert total["gpu_hours_freed"] > 0, total
print("ok", total)
PY
cap=$(awk '/- name: A100-40GB/{f=1} f&&/total_memory_mib:/{print $2; exit}' "$XMEM_SRC/etc/gpus.yaml")
expect_true "no A100-40GB capacity in gpus.yaml" [ -n "$cap" ]
expect=$(sqlite3 "$DB" "select printf('%.4f', sum((1.0 - r.limit_bytes / ($cap * 1048576.0)) *
    j.elapsed_seconds / 3600.0)) from jobs j join requests r on r.id = j.request_id where r.gpu = 'A100-40GB'")
got=$(python3 -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["total"]["gpu_hours_freed"])' "$LAB/user.json")
expect_true "GPU-hours freed: report $got, ledger $expect" [ "$got" = "$expect" ]
pass "totals agree across user/account/partition/gpu; $failing failures counted; GPU-hours freed $got = ledger"

# 2. Table and CSV carry the same total line; a window after the jobs is empty.
run "$REPORT" --db "$DB" --format csv --by gpu
expect_rc 0 "csv"
expect_out "^total,$want,$want,$failing," "csv total row"
run "$REPORT" --db "$DB" --since 2099-01-01
expect_rc 0 "future window"
expect_out "no finished jobs" "empty window"
how="xmem-report"
if [ -x "$XMEM_BUILD/bin/xmem" ]; then
    run "$XMEM_BUILD/bin/xmem" report --db "$DB" --by partition
    expect_rc 0 "xmem report"
    expect_out "^total +$want +$want +$failing " "xmem report total row"
    how="xmem report (through the dispatcher)"
fi
pass "CSV and table totals; empty window; $how"

# 3. Bad input: one line starting xmem:, never a crash; an empty ledger is an empty report.
one_line() { # one_line RC DESCRIPTION
    expect_rc "$1" "$2"
    [ "$(wc -l <<<"$RUN_OUT")" = 1 ] && expect_out "^xmem: " "$2"
}
run "$REPORT" --db "$DB" --since 2026-02-30; one_line 2 "bad date"
run "$REPORT" --db "$DB" --by team; one_line 2 "unknown grouping"
run "$REPORT" --db "$LAB/nope.sqlite"; one_line 1 "missing ledger"
run "$REPORT" --config "$LAB/nope.yaml"; one_line 1 "missing config"
echo "not a database" >"$LAB/text.sqlite"
run "$REPORT" --db "$LAB/text.sqlite"; one_line 1 "not a database"
: >"$LAB/empty.sqlite"
run "$REPORT" --db "$LAB/empty.sqlite" --format json
expect_rc 0 "empty ledger"
expect_out '"total":\{"jobs":0,' "empty ledger total"
run "$REPORT" --config "$LAB/etc/xmem.yaml" --format csv
expect_rc 0 "ledger from the daemon's config"
expect_out "^total,$want," "config's ledger"
pass "bad dates, groupings, missing and empty ledgers: one line or an empty report"

# 4. The HTML page renders in headless Chromium with the JSON's figures.
command -v chromium >/dev/null || t_skip "no chromium for the HTML check (make deps); other checks passed"
"$REPORT" --db "$DB" --format html -o "$LAB/report.html" || fail "html"
expect_false "the page refers to the network" grep -Eq 'https?://' "$LAB/report.html"
dump_dom "$LAB/report.html" "$LAB/dom.html"
python3 - "$LAB/dom.html" "$LAB/user.json" <<'PY' || fail "HTML figures differ from JSON"
import json, re, sys
dom, total = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))["total"]
assert re.search(r'<body[^>]* data-rendered="4"', dom), "script did not run / SVGs missing"
tag = re.search(r'<dl id="totals"([^>]*)>', dom).group(1)
attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', tag))
for key in ("jobs", "packed", "failed", "oom_after_packing"):
    assert int(attrs[key.replace("_", "-")]) == total[key], (key, attrs, total)
assert abs(float(attrs["gpu-hours-freed"]) - total["gpu_hours_freed"]) < 1e-6, attrs
bars = re.findall(r'<rect class="bar" data-key="([^"]*)" data-gpu-hours-freed="([^"]*)" data-jobs="(\d+)"', dom)
assert sum(int(b[2]) for b in bars) == 2 * total["jobs"], bars  # user bars + account bars
print("ok", attrs)
PY
pass "HTML renders in headless Chromium; its totals and bars match the JSON"
finish
