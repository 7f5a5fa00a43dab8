#!/usr/bin/env bash
# Issue 31, part 2: `xmem report --what-if` replays a ledger's history under another policy.
# xmemd creates a real ledger (its own schema); ten job ends are then written into it by
# hand, and the report, with share() of etc/xmem_lib.lua run by lua5.1, must give the counts
# worked out below by hand. The OOM rule (a peak above the limit on a share) decides two of
# them: without it the what-if would count 1 OOM, not 3. Then the CSV and table, bad changes
# (one line, exit 2), and the HTML picture in headless Chromium.
. "$(dirname "$0")/40-daemon.d/lib.sh"
command -v sqlite3 >/dev/null || { echo "no sqlite3 CLI (make deps)"; exit 77; }
command -v lua5.1 >/dev/null || { echo "no lua5.1 (make deps)"; exit 77; }
REPORT=$XMEM_BUILD/bin/xmem-report

# The policy in force: an A100-40GB (40536 MiB in the catalog) in 10 shards of 4053.6 MiB,
# margin 10 %, a job whose share size is above 90 % of the GPU (36482.4 MiB) keeps it whole.
start_munged
write_profiler 0
write_config "policy: {mode: shard, margin_percent: 10, whole_gpu_above_percent: 90, default: {gpu: A100-40GB, shards_per_gpu: 10, mps_per_gpu: 100}, partitions: {debug: {gpu: A100-40GB}}}"
start_xmemd
stop_xmemd # the ledger now exists, at xmemd's schema
expect_eq "$(sql "PRAGMA user_version")" 8 "ledger schema"

# job LIMIT_MIB PEAK_MIB|NULL HOURS CUDA_OOM SHARE_PART|NULL [OPTIONS] [OUTCOME]
n=0
job() {
    n=$((n + 1))
    local limit=$1 peak=$2 hours=$3 oom=$4 part=$5 options=${6:-'{}'} outcome=${7:-0}
    local lb=$((limit * 1048576)) pb=NULL
    [ "$peak" = NULL ] || pb=$((peak * 1048576))
    [ "$outcome" = 0 ] || lb=NULL
    sql "INSERT INTO requests (id, ts, kind, user, uid, options, outcome, outcome_name, peak_bytes,
           limit_bytes, gpu, fits) VALUES ($n, 1800000000, 'estimate', 'alice', 1000, '$options',
           $outcome, 'x', $lb, $lb, 'A100-40GB', 1);
         INSERT INTO jobs (request_id, job_id, exit_status, elapsed_seconds, cuda_oom,
           measured_peak_bytes, reported_by, ts, account, partition, from_node, gpu_fraction)
         VALUES ($n, $((7000 + n)), $oom, $((hours * 3600)), $oom, $pb, 0, $((1800000000 + n)),
           'physics', 'debug', 1, $part);" || fail "cannot write job $n"
}
# Share sizes (limit x 1.10 now, x 1.05 with the change) and shards, ceil(size / 4053.6):
#      limit  peak   h  now: size shard     what-if: size shard   note
job     2000  1800   2 0 0.1 # 2200  1              2100  1
job     4000  4100   1 0 0.2 # 4400  2  OOM         4200  2  OOM    peak above its limit
job     7000  6000   3 0 0.2 # 7700  2              7350  2
job     7500  7000   2 0 0.3 # 8250  3              7875  2
job    34000 33000   1 0 NULL # 37400 whole          35700 9         kept its GPU
job    35000 36000   2 0 NULL # 38500 whole          36750 10 OOM    kept its GPU, above its limit
job     3000  NULL   1 1 0.1 # 3300  1  OOM         3150  1  OOM    OOM on its share
job     1000   900   1 0 NULL '{"check_only":true}' # --xmem=check: never packed
job     5000  NULL   1 0 0.2 # no measured peak: skipped
job     5000  NULL   1 0 NULL '{}' 10 # no estimate (profile_timeout): skipped
#
# Considered: jobs 1-8. Actual: 1, 2, 3, 4, 7 on shares (5 of 8, 62.5 %), 7 ran out of
# memory (1, 20 %); freed (1 - part) x hours over the others: 0.9x2 + 0.8x1 + 0.8x3 + 0.7x2 =
# 6.4 GPU-hours. The policy in force replayed: the same 5 packed; 2 and 7 out of memory
# (2, 40 %); freed 0.9x2 + 0.8x3 + 0.7x2 = 5.6.
# With margin_percent=5,whole_gpu_above_percent=100: 1-7 packed (7, 87.5 %); 2, 6 and 7 out
# of memory (3, 42.86 %); freed 0.9x2 + 0.8x3 + 0.8x2 + 0.1x1 = 5.9.
CHANGE=margin_percent=5,whole_gpu_above_percent=100

run_to "$T/w.json" "$REPORT" --config "$T/xmem.yaml" --format json --what-if "$CHANGE"
expect_rc 0 "report --what-if"
W="j['what_if']"
expect_json "$T/w.json" "$W['considered'] == 8" "jobs considered"
expect_json "$T/w.json" "sorted($W['skipped'].values()) == [1, 1]" "skipped: no peak, no estimate"
expect_json "$T/w.json" "$W['actual']['packed'] == 5 and $W['actual']['oom'] == 1" "actual"
expect_json "$T/w.json" "abs($W['actual']['gpu_hours_freed'] - 6.4) < 1e-6" "actual freed"
expect_json "$T/w.json" "$W['current']['packed'] == 5 and $W['current']['oom'] == 2" "in force"
expect_json "$T/w.json" "abs($W['current']['oom_pct'] - 40) < 1e-6" "in force: OOM %"
expect_json "$T/w.json" "abs($W['current']['gpu_hours_freed'] - 5.6) < 1e-6" "in force: freed"
expect_json "$T/w.json" "$W['what_if']['packed'] == 7 and $W['what_if']['packed_pct'] == 87.5" "what-if packed"
expect_json "$T/w.json" "$W['what_if']['oom'] == 3 and abs($W['what_if']['oom_pct'] - 42.86) < 0.01" "what-if OOMs"
expect_json "$T/w.json" "abs($W['what_if']['gpu_hours_freed'] - 5.9) < 1e-6" "what-if freed"
expect_json "$T/w.json" "[x['what_if']['share'] for x in $W['jobs']] == ['shard:1', 'shard:2', 'shard:2', 'shard:2', 'shard:9', 'shard:10', 'shard:1', 'whole']" "what-if shares"
expect_json "$T/w.json" "[x['current']['share_mib'] for x in $W['jobs']] == [2200, 4400, 7700, 8250, 37400, 38500, 3300, 1100]" "share sizes in force"
expect_json "$T/w.json" "[x['job_id'] for x in $W['jobs'] if x['what_if']['oom']] == [7002, 7006, 7007]" "which jobs run out"
expect_json "$T/w.json" "j['total']['jobs'] == 10" "the report around it is whole"
pass "the replay's counts equal the ones worked out by hand"

run "$REPORT" --config "$T/xmem.yaml" --what-if "$CHANGE"
expect_rc 0 "table"
expect_out "^packed +5 \(62\.5%\) +5 \(62\.5%\) +7 \(87\.5%\)" "table: packed side by side"
expect_out "^7006 .* whole +shard:10 OOM" "table: job 7006 runs out with the change"
run "$REPORT" --config "$T/xmem.yaml" --format csv --what-if mode=mps
expect_rc 0 "csv"
expect_eq "$(grep -c '^70' <<<"$RUN_OUT")" 8 "csv: one row per job"
# mps: ceil(2200 x 100 / 40536) = 6.
expect_out "^7001,alice,debug,A100-40GB,2000,2000,1800,.*,shard:1,2200,0,mps:6,2200,0$" "csv: job 1 under mps"
pass "table and CSV"

# Bad changes: one line naming the change and the fix, exit 2, before the ledger is read.
for bad in "policy=mps|unknown change 'policy' \(use mode, margin_percent" \
    "margin_percent=150|policy.margin_percent: out of range: 150; use a value from 0 to 100" \
    "mode=half|use shard, mps or whole" "mode|expected KEY=VALUE"; do
    run "$REPORT" --db /nonexistent --what-if "${bad%%|*}"
    expect_rc 2 "--what-if ${bad%%|*}"
    expect_out "^xmem: report: --what-if .*${bad#*|}" "--what-if ${bad%%|*}: the line"
    expect_eq "$(wc -l <<<"$RUN_OUT")" 1 "--what-if ${bad%%|*}: one line"
done
run "$REPORT" --db "$DB" --config "$T/none.yaml" --what-if mode=mps
expect_rc 1 "no config"
expect_out "^xmem: report: --what-if replays the policy of xmemd's config: no config at" "no config: the line"
pass "bad changes"

# The picture, in headless Chromium: one bar per job, the OOMs marked, totals as in the JSON.
command -v chromium >/dev/null || { echo "no chromium for the HTML check (make deps); other checks passed"; exit 77; }
"$REPORT" --config "$T/xmem.yaml" --format html --what-if "$CHANGE" -o "$T/w.html" || fail "html"
expect_false "the page refers to the network" grep -Eq 'https?://' "$T/w.html"
dump_dom "$T/w.html" "$T/dom.html"
python3 - "$T/dom.html" "$T/w.json" <<'PY' || fail "the what-if picture differs from the JSON"
import json, re, sys
dom, w = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))["what_if"]
assert re.search(r'<body[^>]* data-rendered="5"', dom), "script did not run / SVGs missing"
attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', re.search(r'<dl id="what-if"([^>]*)>', dom).group(1)))
for side, key in (("actual", "actual"), ("current", "current"), ("what-if", "what_if")):
    assert int(attrs[side + "-packed"]) == w[key]["packed"], (side, attrs)
    assert int(attrs[side + "-oom"]) == w[key]["oom"], (side, attrs)
    assert abs(float(attrs[side + "-gpu-hours-freed"]) - w[key]["gpu_hours_freed"]) < 1e-6
bars = re.findall(r'<g class="what-if-job" ([^>]*)>', dom)
bars = [dict(re.findall(r'data-([a-z-]+)="([^"]*)"', b)) for b in bars]
assert len(bars) == 8, bars
peaks = [float(b["peak-mib"]) for b in bars]
assert peaks == sorted(peaks), peaks
assert sorted(int(b["job"]) for b in bars if b["what-if-oom"] == "1") == [7002, 7006, 7007], bars
assert sum(b["current-oom"] == "1" for b in bars) == 2, bars
red = re.findall(r'<rect class="peak"[^>]*fill="#d8403b"', dom)
assert len(red) == 3, red
# Job 6 is held to the whole GPU now and to its limit with the change.
six = [b for b in bars if b["job"] == "7006"][0]
assert (six["current-held-mib"], six["what-if-held-mib"]) == ("40536", "35000"), six
print("ok", attrs)
PY
pass "the what-if picture renders in headless Chromium, one bar per job, OOMs marked"
finish
