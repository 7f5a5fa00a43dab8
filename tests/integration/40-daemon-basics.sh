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
expect_true "shipped xmem.yaml rejected" \
    grep -q ": ok" <<<"$("$B/xmemd" --config "$T/shipped.yaml" --check-config)"
printf 'socket: %s\nmax_concurent: 3\n' "$SOCK" >"$T/bad.yaml"
run "$B/xmemd" --config "$T/bad.yaml" --foreground
expect_true "bad config accepted" [ "$RUN_RC" != 0 ]
expect_eq "$RUN_OUT" "xmemd: $T/bad.yaml:2: max_concurent: unknown key; check its spelling and place against etc/xmem.yaml, which lists the keys" "bad config message"
run "$B/xmemd" --config "$T/xmem.yaml" --render-policy "$T/policy.lua"
expect_rc 0 "render-policy"
expect_true "policy lacks daemon_uid" grep -q 'daemon_uid = 0,' "$T/policy.lua"
expect_true "policy default (memory from the catalog)" grep -q \
    'default = { gpu = "A100-40GB", memory_mb = 40536, shards_per_gpu = 10, mps_per_gpu = 100, enforcement = "client" }' "$T/policy.lua"

log "unsafe socket directory and stale lock"
chmod 0777 "$T/run"
run "$B/xmemd" --config "$T/xmem.yaml" --foreground
expect_true "started in a 0777 socket dir" [ "$RUN_RC" != 0 ]
expect_out "writable by group or others.*chmod 0755" "no hint for unsafe dir"
chmod 0755 "$T/run"
echo 1 >"$T/run/xmemd.lock" # a pid that runs: not ours to judge without --force
run "$B/xmemd" --config "$T/xmem.yaml" --foreground
expect_true "started over a lock naming a running pid" [ "$RUN_RC" != 0 ]
expect_out "stale lock .* pid 1,.*--force" "no stale-lock hint"
echo 999999 >"$T/run/xmemd.lock"

log "start (taking over the stale lock of a pid that no longer runs, without --force)"
start_xmemd
expect_true "no warning for the stale lock taken over" \
    grep -q "taking over the stale lock .* 999999, which is not running" "$T/xmemd.log"
expect_true "no start line" grep -q "starting xmemd .* (pid $XMEMD_PID)" "$T/xmemd.log"
run "$B/xmemd" --config "$T/xmem.yaml" --foreground
expect_true "second xmemd started" [ "$RUN_RC" != 0 ]
expect_out "another xmemd \(pid $XMEMD_PID\) holds" "no lock message"

log "estimate as a user: profile, then cache hit"
# The first reply is what a failed check prints.
log_watch "$T/e1"
run_to "$T/e1" runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py
expect_rc 0 "first estimate"
expect_eq "$(kv "$T/e1" name)" estimated "first outcome"
expect_eq "$(kv "$T/e1" cached)" 0 "first is a profile"
expect_eq "$(kv "$T/e1" gpu_memory)" 42505076736 "gpu memory from the catalog (40536 MiB)"
run_to "$T/e2" runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py
expect_rc 0 "second estimate"
expect_eq "$(kv "$T/e2" cached)" 1 "second is a cache hit"
echo 'X = 2' >"$T/w/helper.py"
run_to "$T/e3" runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py
expect_rc 0 "third estimate"
expect_eq "$(kv "$T/e3" cached)" 0 "an imported module changed: profile again"

log "the partition chooses the GPU the profiler is asked for"
run_to "$T/p" runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" --partition big -- python3 train.py
expect_rc 0 "partition estimate"
id_p=$(kv "$T/p" id)
expect_true "profiler argv for partition big: $(sql "SELECT breakdown FROM requests WHERE id=$id_p")" \
    grep -q -- "--gpu H100-80GB --steps 3 -- python3 train.py" <<<"$(sql "SELECT breakdown FROM requests WHERE id=$id_p")"
expect_true "default GPU argv" grep -q -- "--json --gpu A100-40GB --steps 3 --" \
    <<<"$(sql "SELECT breakdown FROM requests WHERE id=$(kv "$T/e1" id)")"

log "decision verified with unmunge"
id1=$(kv "$T/e1" id)
# The decision unmunged is what a failed check prints.
log_watch "$T/un"
kv "$T/e1" decision >"$T/decision"
run_to "$T/un" unmunge --socket="$T/munge/sock" <"$T/decision"
expect_rc 0 "unmunge rejected the decision"
expect_true "decision not signed by uid 0" grep -q "^UID: .*(0)" "$T/un"
uid1=$(id -u xmemt1)
# No batch script and no GPU request in this request: both bindings are "-"; the directory
# is the digest of the cwd the request named, the environment the digest of the bound names.
dir1=$(printf %s "$T/w" | sha256sum | cut -d' ' -f1)
expect_true "decision payload" grep -Eq \
    "^xmem-decision v1 uid=$uid1 request=$id1 peak=1073741824 limit=1288490189 gpu=A100-40GB script=- dir=$dir1 gres=- envnames=PATH:PYTHONPATH:[A-Z_:]+ env=[0-9a-f]{64} expires=[0-9]+$" "$T/un"

log "root is refused (allow_root: false), ledger rows, job_end"
run_to "$T/r" "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py
expect_true "root was profiled" [ "$RUN_RC" != 0 ]
expect_eq "$(kv "$T/r" name)" root_refused "root outcome"
expect_eq "$(sql "SELECT user||':'||uid||':'||outcome_name FROM requests WHERE id=$id1")" "xmemt1:$uid1:estimated" "ledger row"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE kind='estimate'")" 5 "ledger rows"
run_to /dev/null "$L" job-end "$SOCK" "$id1@$uid1" 4242 0 77 1
expect_rc 0 "the node's job_end"
expect_eq "$(sql "SELECT job_id||':'||elapsed_seconds||':'||cuda_oom FROM jobs WHERE request_id=$id1")" "4242:77:1" "jobs row"
run_to /dev/null "$L" job-end "$SOCK" 999999 1 0 1 0
expect_true "job_end for an unknown request accepted" [ "$RUN_RC" != 0 ]

log "status counters"
expect_eq "$(status_field counters estimated)" 4 "estimated counter"
expect_eq "$(status_field counters root_refused)" 1 "root_refused counter"
expect_eq "$(status_field cache hits)" 1 "cache hits"
expect_true "human status" grep -q "cache: *1 entries\|cache: .*hits" <<<"$("$T/bin/xmem-status" -s "$SOCK")"
run_to /dev/null "$T/bin/xmem-status" -s "$T/nope.sock"
expect_true "status of a missing socket" [ "$RUN_RC" != 0 ]
printf '%s\n' "$RUN_OUT" >"$T/err"
expect_true "unreachable message: $(cat "$T/err")" grep -q \
    "xmem: cannot reach xmemd at $T/nope.sock: No such file or directory (is xmemd running?)" "$T/err"

log "Prometheus metrics on the same loop"
expect_true "metrics endpoint" python3 - "$PORT" >"$T/metrics" <<'PY'
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode())
PY
expect_true "estimated counter in metrics" \
    grep -q '^xmemd_requests_total{outcome="estimated",code="0"} 4$' "$T/metrics"
expect_true "root_refused in metrics" grep -q '^xmemd_requests_total{outcome="root_refused",code="7"} 1$' "$T/metrics"
expect_true "cache hit ratio in metrics" grep -q '^xmemd_cache_hit_ratio 0.25$' "$T/metrics"
expect_true "profile histogram" grep -q '^xmemd_profile_duration_seconds_count 3$' "$T/metrics"
expect_true "queue depth gauge" grep -q '^xmemd_queue_depth 0$' "$T/metrics"

log "issue 26 L4: one user's 16 idle connections leave room for the scraper"
runuser -u xmemt1 -- python3 - "$PORT" >"$T/idle-open" <<'PY' &
import socket, sys, time
conns = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(16)]
print("open", flush=True)
time.sleep(4)  # idle, below xmemd's 5 s scrape deadline
PY
idle=$!
for _ in $(seq 50); do [ -s "$T/idle-open" ] && break; sleep 0.1; done
expect_true "the idle connections were not opened" [ -s "$T/idle-open" ]
expect_true "a scrape beside one user's 16 idle connections" python3 - "$PORT" >"$T/metrics2" <<'PY'
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=3).read().decode())
PY
expect_true "the scrape beside the idle connections" grep -q '^xmemd_queue_depth 0$' "$T/metrics2"
wait "$idle"

log "SIGTERM"
stop_xmemd
expect_false "socket left behind" [ -e "$SOCK" ]
expect_false "pid left in the lock after a clean stop" [ -s "$T/run/xmemd.lock" ]
expect_eq "$(sql 'PRAGMA integrity_check')" ok "ledger integrity"
finish
