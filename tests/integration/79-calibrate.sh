#!/usr/bin/env bash
# Issue 19, the closed loop: `xmem calibrate` learns the margin per GPU type from a ledger
# built by real lab jobs whose peaks a fake NVML reports (as in 76), with one job that runs
# out of memory on its share (censored: it counts as exceeding at any margin). The proposed
# margin is checked against an independent computation; --apply writes the calibration
# file, xmemd reloads and re-renders the policy (policy_file:), and a new packed job gets a
# larger share. Bad input (an empty ledger, a GPU the catalog lacks, a corrupt peak, too few
# pairs, --apply as a user) gets one line, a nonzero status and changes nothing. The job_end
# fields enforcement and oom_requeued go through the real client: a bad level is refused,
# a good one is recorded, and the report counts the requeue.
T_NAME=79-calibrate
. "$(dirname "$0")/lab/testlib.sh"
t_require_lab
CAL=$XMEM_BUILD/bin/xmem-calibrate
REPORT=$XMEM_BUILD/bin/xmem-report
LOAD=$XMEM_BUILD/bin/xmemd-load
FAKE_NVML=$XMEM_BUILD/lib/libxmem-fake-nvml.so
[ -x "$CAL" ] || t_skip "no $CAL (not built)"
[ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"
[ -f "$FAKE_NVML" ] || t_skip "no $FAKE_NVML (the plugin unit tests are not built)"
command -v sqlite3 >/dev/null || t_skip "no sqlite3 CLI (make deps)"

# oom_requeue=off: its OOM job on a share must stay one censored pair, not be rerun whole.
XMEM_PLUGSTACK_ARGS="nvml=$FAKE_NVML nvml_interval_ms=100 oom_requeue=off" XMEM_LAB_PROFILER=fake lab_up shard
expect_true "xmemd did not start" [ "$LAB_XMEMD" = 1 ]
DB=$LAB/state/xmem-ledger.sqlite
CONF=$LAB/etc/xmem.yaml
CALFILE=$LAB/state/calibration.yaml
POLICY=$LAB/etc/xmem_policy.lua
# xmemd re-renders the policy the controller loads, and keeps the calibration with its state.
printf 'calibration: %s\npolicy_file: %s\n' "$CALFILE" "$POLICY" >>"$CONF"
cd "$LAB/jobs" || fail "no $LAB/jobs"
echo 'print("training")' >train.py

peak() { echo "XMEM_FAKE_NVML_MIB=$1 sleep 2"; }
# (limit MiB, measured MiB): +25%, -10%, +5%, -12.5%, and an OOM on a 3000 MiB share.
job_script j1.sbatch 4000 "$(peak 5000)"
job_script j2.sbatch 5000 "$(peak 4500)"
job_script j3.sbatch 6000 "$(peak 6300)"
job_script j4.sbatch 8000 "$(peak 7000)"
job_script j5.sbatch 3000 'echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2; exit 1'
ids=()
for j in j1 j2 j3 j4 j5; do
    submit --xmem -A physics -o "$LAB/jobs/$j.out" -e "$LAB/jobs/$j.err" "$LAB/jobs/$j.sbatch"
    ids+=("$JOB")
done
for id in "${ids[@]}"; do
    lab_wait_state "$id" 90 COMPLETED FAILED || fail "job $id did not finish"
done
all=$(IFS=,; echo "${ids[*]}")
for _ in $(seq 1 60); do
    got=$(sqlite3 "$DB" "select count(*) from jobs where job_id in ($all) and (measured_peak_bytes is not null or cuda_oom = 1)")
    [ "$got" = 5 ] && break
    sleep 0.5
done
expect_true "job_end rows with a peak or an OOM: $got of 5" [ "$got" = 5 ]
pass "5 lab jobs in the ledger: 4 with fake-NVML peaks, 1 out of memory on its share"

# 1. The proposal, recomputed here from the ledger: the smallest m with
#    (censored + #{measured*100 > limit*(100+m)}) <= R * n.
R=0.2
run "$CAL" --config "$CONF" --target-oom-rate $R --min-pairs 5
expect_rc 0 "calibrate"
proposed=$(sed -n 's/^  proposed margin \([0-9]*\)% .*/\1/p' <<<"$RUN_OUT")
want=$(sqlite3 -separator ' ' "$DB" "select r.limit_bytes, coalesce(j.measured_peak_bytes, 0), j.cuda_oom
    from jobs j join requests r on r.id = j.request_id" | python3 -c '
import sys
rows = [tuple(map(int, l.split())) for l in sys.stdin if l.strip()]
rate = float(sys.argv[1])
for m in range(0, 101):
    over = sum(1 for lim, meas, oom in rows if oom or meas * 100 > lim * (100 + m))
    if over <= rate * len(rows):
        print(m); break' $R)
expect_true "no proposed margin" [ -n "$proposed" ]
expect_eq "$proposed" "$want" "proposed margin against the one recomputed"
expect_true "the recomputed margin is $want, not the 25% the jobs were built for" [ "$want" = 25 ]
expect_out "^A100-40GB: 5 pairs \(4 measured, 1 out of memory on a share" "pairs line"
expect_out "error \(measured/limit - 1\): min -12.5%  p50 -10.0%  p90 \+25.0%  p99 \+25.0%  max \+25.0%" "error distribution"
expect_out "proposed margin 25% \(current 10%\): 1 of 5 pairs \(20.00%\) exceed limit\+25%" "proposal line"
expect_out "expected slack [0-9.]+ GiB per job" "slack line"
pass "proposed margin $proposed% = the independent recomputation (the censored OOM counts as exceeding)"
run "$CAL" --config "$CONF" --target-oom-rate $R --min-pairs 5 --by account
expect_out "^  account physics: 5 pairs" "per-account evidence"
run "$CAL" --config "$CONF" --target-oom-rate $R --min-pairs 6
expect_rc 0 "too few pairs, without --apply"
expect_out "no proposal: 5 pair\(s\), fewer than the 6 needed \(--min-pairs\) \(current margin 10%\)" "too few pairs"
pass "--by account shows the account's evidence; below --min-pairs no margin is proposed"

# 2. Bad input changes nothing: no calibration file appears, xmemd is not signalled.
reloads() { grep -c "SIGHUP: reloaded" "$LAB/log/xmemd.log"; }
before=$(reloads)
expect_calibrate_refused() { # expect_calibrate_refused REGEX WHAT COMMAND...
    local regex=$1 what=$2
    shift 2
    run "$@"
    expect_true "$what: exit status 0" [ "$RUN_RC" != 0 ]
    # One line, besides the config loader's warnings about the lab's deprecated memory_gb.
    expect_true "$what: more than one line" \
        [ "$(grep -vc ' warning: .*memory_gb: deprecated' <<<"$RUN_OUT")" = 1 ]
    expect_out "$regex" "$what"
    expect_true "$what: $CALFILE was written" [ ! -e "$CALFILE" ]
    expect_true "$what: xmemd was reloaded" [ "$(reloads)" = "$before" ]
}
sqlite3 "$LAB/empty.sqlite" "create table t(x)"
expect_calibrate_refused "^xmem: calibrate: $LAB/empty.sqlite holds no pair of an estimate and a measured peak" \
    "empty ledger" "$CAL" --config "$CONF" --db "$LAB/empty.sqlite" --apply
copy() { sqlite3 "$DB" ".backup '$1'" || fail "cannot copy the ledger to $1"; } # WAL-safe
copy "$LAB/nogpu.sqlite"
sqlite3 "$LAB/nogpu.sqlite" "update requests set gpu = 'Z80' where id = (select request_id from jobs where job_id = ${ids[1]})"
expect_calibrate_refused "^xmem: calibrate: $LAB/nogpu.sqlite: job ${ids[1]}: GPU 'Z80' is not in the GPU catalog" \
    "GPU type missing from the catalog" "$CAL" --config "$CONF" --db "$LAB/nogpu.sqlite" --apply
for bad in "'abc'" -5; do
    copy "$LAB/corrupt.sqlite"
    sqlite3 "$LAB/corrupt.sqlite" "update jobs set measured_peak_bytes = $bad where job_id = ${ids[2]}"
    expect_calibrate_refused "^xmem: calibrate: $LAB/corrupt.sqlite: job ${ids[2]}: measured_peak_bytes is '${bad//\'/}', not a byte count" \
        "corrupt peak $bad" "$CAL" --config "$CONF" --db "$LAB/corrupt.sqlite" --apply
done
# Too few pairs is evidence, not bad input: it is printed, then the one line that refuses.
run "$CAL" --config "$CONF" --min-pairs 6 --apply
expect_true "too few pairs, --apply: exit status $RUN_RC" [ "$RUN_RC" = 1 ]
expect_true "too few pairs, --apply: last line" \
    [ "$(tail -n 1 <<<"$RUN_OUT")" = "xmem: calibrate: nothing to apply: no GPU type has a proposal" ]
expect_false "too few pairs, --apply: calibration file written" [ -e "$CALFILE" ]
expect_eq "$(reloads)" "$before" "too few pairs, --apply: xmemd reloads"
chmod o+r "$CONF"
expect_calibrate_refused "^xmem: calibrate: --apply writes the calibration file and signals xmemd: run it as root" \
    "--apply as a user" runuser -u nobody -- "$CAL" --config "$CONF" --apply
pass "empty ledger, a GPU the catalog lacks, a non-numeric and a negative peak, too few pairs and a user's --apply: one line each, nothing written, no reload"

# 3. Before: a 7000 MiB job at 10% is 7700 MiB, two 4096 MiB shards.
job_script next.sbatch 7000 "true"
submit --xmem --hold "$LAB/jobs/next.sbatch"
expect_field "$JOB" TresPerNode gres:shard:2 "share at the site margin"
scancel "$JOB"
expect_false "the policy has margins before --apply" grep -q 'margins' "$POLICY"

# 4. --apply: the file, the reload, the re-rendered policy, the next job's share.
run "$CAL" --config "$CONF" --target-oom-rate $R --min-pairs 5 --apply
expect_rc 0 "--apply"
expect_out "^wrote $CALFILE" "--apply names the file"
expect_true "calibration file: $(stat -c '%U %a' "$CALFILE")" [ "$(stat -c '%U %a' "$CALFILE")" = "root 644" ]
expect_true "calibration file: $(cat "$CALFILE")" grep -qx '    percent: 25' "$CALFILE"
for _ in $(seq 1 50); do
    grep -q 'percent = 25' "$POLICY" && break
    sleep 0.2
done
expect_true "policy: $(cat "$POLICY")" grep -q '\["A100-40GB"\] = { percent = 25, accounts = { } }' "$POLICY"
expect_true "xmemd reloads: $(reloads), expected $((before + 1))" [ "$(reloads)" = $((before + 1)) ]
sum=$(sha256sum <"$CALFILE")
submit --xmem --hold "$LAB/jobs/next.sbatch"
expect_field "$JOB" TresPerNode gres:shard:3 "share at the calibrated margin (8750 MiB)"
scancel "$JOB"
pass "--apply wrote $CALFILE (root 0644), xmemd reloaded and rendered margins = 25% into the policy; the 7000 MiB job now gets shard:3, not shard:2"

# 5. A bad calibration file keeps xmemd's config: the policy keeps 25%.
printf 'version: 1\nmargins:\n  A100-40GB: {percent: lots}\n' >"$CALFILE.bad"
cp "$CALFILE.bad" "$CALFILE"
kill -HUP "$(cat "$LAB/run/xmemd.pid")"
lab_wait_for 10 grep -q "SIGHUP: keeping the previous config: $CALFILE:3: margins.A100-40GB.percent" "$LAB/log/xmemd.log" ||
    fail "xmemd did not refuse the bad calibration file"
expect_true "the policy lost its margin" grep -q 'percent = 25' "$POLICY"
run "$CAL" --config "$CONF" --min-pairs 5 --apply
expect_rc 1 "calibrate with a bad calibration file"
expect_out "^xmem: calibrate: $CALFILE:3: margins.A100-40GB.percent" "bad file named"
expect_true "calibrate rewrote a bad calibration file" cmp -s "$CALFILE" "$CALFILE.bad"
pass "a bad calibration file: xmemd keeps its previous config, calibrate names the line"

# 6. job_end's enforcement and oom_requeued through the real client.
req=$(sqlite3 "$DB" "select request_id from jobs where job_id = ${ids[0]}")
run "$LOAD" job-end "$LAB/run/xmemd.sock" "$req@0" 990001 0 5 0 physics debug 100 bogus 0
expect_true "an unknown enforcement level was recorded" [ "$RUN_RC" != 0 ]
expect_out "enforcement: expected none, client, mps-server or dmem" "unknown level refused"
run "$LOAD" job-end "$LAB/run/xmemd.sock" "$req@0" 990002 0 5 1 physics debug - dmem 1
expect_rc 0 "job_end with enforcement dmem, requeued"
expect_true "job row: $(sqlite3 "$DB" "select * from jobs where job_id = 990002")" \
    [ "$(sqlite3 "$DB" "select enforcement || ' ' || oom_requeued from jobs where job_id = 990002")" = "dmem 1" ]
expect_true "refused row stored" [ "$(sqlite3 "$DB" "select count(*) from jobs where job_id = 990001")" = 0 ]
"$REPORT" --db "$DB" --format json --by-day >"$LAB/r.json" || fail "report"
python3 - "$LAB/r.json" <<'PY' || fail "report's requeues and enforcement"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["total"]
assert t["oom_requeued"] == 1, t
# The lab's own jobs were held by the client variable (no cgroup, no MPS here): the plugin says so.
assert t["enforcement"]["dmem"] == 1 and t["enforcement"]["client"] == t["jobs"] - 1, t
e = r["error_over_time"]
assert e["period"] == "day" and sum(p["requeues"] for p in e["rows"].values()) == 1, e
assert sum(p["pairs"] for p in e["rows"].values()) == 6, e  # 4 measured, 2 OOMs on a share
PY
pass "job_end: an unknown enforcement level is refused; dmem and a requeue are recorded and counted by the report"
finish
