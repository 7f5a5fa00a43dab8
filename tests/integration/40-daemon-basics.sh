#!/usr/bin/env bash
# xmemd basics on a real socket with a real munged and SQLite: estimate (profile then cache
# hit), the signed decision verified by unmunge, status, job_end, render-policy, strict
# config errors, root refusal, stale lock, unsafe socket directory, clean SIGTERM.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
write_profiler 0
ensure_user xmemt1
PORT=$((20000 + RANDOM % 30000))
write_config "allow_root: false" "cache: {ttl_seconds: 60, max_entries: 100}" "metrics_listen: 127.0.0.1:$PORT" \
    "policy: {default: {gpu: A100-40GB, memory_gb: 40}, partitions: {big: {gpu: H100-80GB, memory_gb: 80}}}"
mkdir -m 0755 "$T/w"
echo 'import helper' >"$T/w/train.py"
echo 'X = 1' >"$T/w/helper.py"
chown -R xmemt1 "$T/w"

log "config checks"
# --check-config also checks that the estimator is installed: the shipped file, with its
# install path mapped to this build tree's xmem-estimate.
sed "s|^estimator: \[[^,]*|estimator: [$B/xmem-estimate|" "$SRC/etc/xmem.yaml" >"$T/shipped.yaml"
"$B/xmemd" --config "$T/shipped.yaml" --check-config | grep -q ": ok" || fail "shipped xmem.yaml rejected"
printf 'socket: %s\nmax_concurent: 3\n' "$SOCK" >"$T/bad.yaml"
out=$("$B/xmemd" --config "$T/bad.yaml" --foreground 2>&1) && fail "bad config accepted"
expect_eq "$out" "xmemd: $T/bad.yaml:2: max_concurent: unknown key (see etc/xmem.yaml for the keys)" "bad config message"
"$B/xmemd" --config "$T/xmem.yaml" --render-policy "$T/policy.lua" || fail "render-policy"
grep -q 'daemon_uid = 0,' "$T/policy.lua" || fail "policy lacks daemon_uid"
grep -q 'default = { gpu = "A100-40GB", memory_mb = 40536, shards_per_gpu = 10, mps_per_gpu = 100, enforcement = "client" }' "$T/policy.lua" || fail "policy default (memory from the catalog)"

log "unsafe socket directory and stale lock"
chmod 0777 "$T/run"
out=$("$B/xmemd" --config "$T/xmem.yaml" --foreground 2>&1) && fail "started in a 0777 socket dir"
echo "$out" | grep -q "writable by group or others.*chmod 0755" || fail "no hint for unsafe dir: $out"
chmod 0755 "$T/run"
echo 1 >"$T/run/xmemd.lock" # a pid that runs: not ours to judge without --force
out=$("$B/xmemd" --config "$T/xmem.yaml" --foreground 2>&1) && fail "started over a lock naming a running pid"
echo "$out" | grep -q "stale lock .* pid 1,.*--force" || fail "no stale-lock hint: $out"
echo 999999 >"$T/run/xmemd.lock"

log "start (taking over the stale lock of a pid that no longer runs, without --force)"
start_xmemd
grep -q "taking over the stale lock .* 999999, which is not running" "$T/xmemd.log" \
    || fail "no warning for the stale lock taken over"
grep -q "starting xmemd .* (pid $XMEMD_PID)" "$T/xmemd.log" || fail "no start line"
out=$("$B/xmemd" --config "$T/xmem.yaml" --foreground 2>&1) && fail "second xmemd started"
echo "$out" | grep -q "another xmemd (pid $XMEMD_PID) holds" || fail "no lock message: $out"

log "estimate as a user: profile, then cache hit"
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/e1" || { cat "$T/e1"; fail "first estimate"; }
expect_eq "$(kv "$T/e1" name)" estimated "first outcome"
expect_eq "$(kv "$T/e1" cached)" 0 "first is a profile"
expect_eq "$(kv "$T/e1" gpu_memory)" 42505076736 "gpu memory from the catalog (40536 MiB)"
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/e2" || fail "second estimate"
expect_eq "$(kv "$T/e2" cached)" 1 "second is a cache hit"
echo 'X = 2' >"$T/w/helper.py"
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/e3" || fail "third estimate"
expect_eq "$(kv "$T/e3" cached)" 0 "an imported module changed: profile again"

log "the partition chooses the GPU the profiler is asked for"
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" --partition big -- python3 train.py >"$T/p" || fail "partition estimate"
id_p=$(kv "$T/p" id)
sql "SELECT breakdown FROM requests WHERE id=$id_p" | grep -q -- "--gpu H100-80GB --steps 3 -- python3 train.py" \
    || fail "profiler argv for partition big: $(sql "SELECT breakdown FROM requests WHERE id=$id_p")"
sql "SELECT breakdown FROM requests WHERE id=$(kv "$T/e1" id)" | grep -q -- "--json --gpu A100-40GB --steps 3 --" || fail "default GPU argv"

log "decision verified with unmunge"
id1=$(kv "$T/e1" id)
kv "$T/e1" decision | unmunge --socket="$T/munge/sock" >"$T/un" || fail "unmunge rejected the decision"
grep -q "^UID: .*(0)" "$T/un" || fail "decision not signed by uid 0"
uid1=$(id -u xmemt1)
# No batch script and no GPU request in this request: both bindings are "-"; the directory
# is the digest of the cwd the request named, the environment the digest of the bound names.
dir1=$(printf %s "$T/w" | sha256sum | cut -d' ' -f1)
grep -Eq "^xmem-decision v1 uid=$uid1 request=$id1 peak=1073741824 limit=1288490189 gpu=A100-40GB script=- dir=$dir1 gres=- envnames=PATH:PYTHONPATH:[A-Z_:]+ env=[0-9a-f]{64} expires=[0-9]+$" "$T/un" \
    || { cat "$T/un"; fail "decision payload"; }

log "root is refused (allow_root: false), ledger rows, job_end"
"$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/r" && fail "root was profiled"
expect_eq "$(kv "$T/r" name)" root_refused "root outcome"
expect_eq "$(sql "SELECT user||':'||uid||':'||outcome_name FROM requests WHERE id=$id1")" "xmemt1:$uid1:estimated" "ledger row"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE kind='estimate'")" 5 "ledger rows"
"$L" job-end "$SOCK" "$id1@$uid1" 4242 0 77 1 >/dev/null || fail "the node's job_end"
expect_eq "$(sql "SELECT job_id||':'||elapsed_seconds||':'||cuda_oom FROM jobs WHERE request_id=$id1")" "4242:77:1" "jobs row"
"$L" job-end "$SOCK" 999999 1 0 1 0 >/dev/null && fail "job_end for an unknown request accepted"

log "status counters"
expect_eq "$(status_field counters estimated)" 4 "estimated counter"
expect_eq "$(status_field counters root_refused)" 1 "root_refused counter"
expect_eq "$(status_field cache hits)" 1 "cache hits"
"$T/bin/xmem-status" -s "$SOCK" | grep -q "cache: *1 entries\|cache: .*hits" || fail "human status"
"$T/bin/xmem-status" -s "$T/nope.sock" 2>"$T/err" && fail "status of a missing socket"
grep -q "xmem: cannot reach xmemd at $T/nope.sock: No such file or directory (is xmemd running?)" "$T/err" || fail "unreachable message: $(cat "$T/err")"

log "Prometheus metrics on the same loop"
python3 - "$PORT" >"$T/metrics" <<'PY' || fail "metrics endpoint"
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode())
PY
grep -q '^xmemd_requests_total{outcome="estimated",code="0"} 4$' "$T/metrics" || fail "estimated counter in metrics"
grep -q '^xmemd_requests_total{outcome="root_refused",code="7"} 1$' "$T/metrics" || fail "root_refused in metrics"
grep -q '^xmemd_cache_hit_ratio 0.25$' "$T/metrics" || fail "cache hit ratio in metrics"
grep -q '^xmemd_profile_duration_seconds_count 3$' "$T/metrics" || fail "profile histogram"
grep -q '^xmemd_queue_depth 0$' "$T/metrics" || fail "queue depth gauge"

log "issue 26 L4: one user's 16 idle connections leave room for the scraper"
runuser -u xmemt1 -- python3 - "$PORT" >"$T/idle-open" <<'PY' &
import socket, sys, time
conns = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(16)]
print("open", flush=True)
time.sleep(4)  # idle, below xmemd's 5 s scrape deadline
PY
idle=$!
for _ in $(seq 50); do [ -s "$T/idle-open" ] && break; sleep 0.1; done
[ -s "$T/idle-open" ] || fail "the idle connections were not opened"
python3 - "$PORT" >"$T/metrics2" <<'PY' || fail "a scrape beside one user's 16 idle connections"
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=3).read().decode())
PY
grep -q '^xmemd_queue_depth 0$' "$T/metrics2" || fail "the scrape beside the idle connections"
wait "$idle"

log "SIGTERM"
stop_xmemd
[ -e "$SOCK" ] && fail "socket left behind"
[ -s "$T/run/xmemd.lock" ] && fail "pid left in the lock after a clean stop"
expect_eq "$(sql 'PRAGMA integrity_check')" ok "ledger integrity"
echo "ok"
