#!/usr/bin/env bash
# 50 concurrent clients, a mix of cache hits and real (trivial) profiles: every one answered,
# and the counters, the ledger and the clients' own tallies add up. Then a flood against a
# small queue: the overflow is answered "busy" at once, never left hanging. One user's flood
# cannot take the queue from another user (issue 26 M5).
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
write_profiler 0.3
ensure_user xmemt1
write_config "max_concurrent: 3" "max_per_user: 3" "queue_size: 100"
mkdir -m 0755 "$T/w" && echo 'print(1)' >"$T/w/train.py" && chown -R xmemt1 "$T/w"
start_xmemd

log "warm 5 keys, then 50 clients over 10 keys (5 cached, 5 new)"
# The clients' tallies are what a failed check prints; a load waits as long as it needs.
log_watch "$T/warm" "$T/load"
RUN_TIMEOUT=600
run_to "$T/warm" runuser -u xmemt1 -- "$L" load "$SOCK" -n 5 -c 5 -k 5 --cwd "$T/w" -- python3 train.py
expect_rc 0 "warm-up"
run_to "$T/load" runuser -u xmemt1 -- "$L" load "$SOCK" -n 50 -c 50 -k 10 --cwd "$T/w" -- \
    python3 train.py
expect_rc 0 "not every client got an estimate"
cat "$T/load"
expect_eq "$(kv "$T/load" rc0)" 50 "clients answered OK"
cached=$(kv "$T/load" cached)
# Keys 0-4 are cached (25 requests); keys 5-9 profile exactly once each: a request for a key
# that is being profiled waits for that profile (coalescing) instead of profiling again.
expect_eq "$cached" 45 "requests answered without a profile of their own"
expect_eq "$(status_field counters estimated)" 55 "estimated counter"
hits=$(status_field cache hits); misses=$(status_field cache misses)
expect_eq "$((hits + misses))" 55 "hits + misses"
expect_eq "$hits" "$cached" "daemon hits = clients' cached"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE kind='estimate' AND outcome=0")" 55 "ledger rows"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE cached=1")" "$hits" "ledger cached rows"
expect_eq "$misses" 10 "profiles run (5 warm-up keys, 5 new keys)"
expect_eq "$(sql "SELECT count(DISTINCT id) FROM requests")" 55 "distinct request ids"
expect_eq "$(status_field running)" 0 "nothing running"
expect_eq "$(status_field queue_depth)" 0 "queue empty"

log "busy: queue of 2, one slot, 20 distinct profiles at once"
stop_xmemd
write_profiler 1
write_config "max_concurrent: 1" "max_per_user: 1" "queue_size: 2"
start_xmemd
start=$(date +%s.%N)
runuser -u xmemt1 -- "$L" load "$SOCK" -n 20 -c 20 -k 20 --cwd "$T/w" -- python3 train.py >"$T/busy"
cat "$T/busy"
busy=$(kv "$T/busy" rc-3)
ok=$(kv "$T/busy" rc0)
expect_eq "$((busy + ok))" 20 "every client answered (ok or busy)"
about3="expected about 3 profiled (1 running + 2 queued; a few more if a slot frees while clients still arrive), got $ok"
expect_true "$about3" [ "$ok" -ge 3 ]
expect_true "$about3" [ "$ok" -le 6 ]
expect_eq "$(status_field counters busy)" "$busy" "busy counter"
# The busy answers came at once: their latency is far below one profile.
expect_true "busy answers were not immediate" python3 - "$T/busy" <<'PY'
import sys
kv = dict(l.strip().split("=", 1) for l in open(sys.argv[1]) if "=" in l)
assert float(kv["p50_ms"]) < 500, kv["p50_ms"]
PY

log "coalescing: 20 identical new requests at once, one slot, a queue of 2: one profile, all answered"
misses0=$(status_field cache misses)
runuser -u xmemt1 -- "$L" load "$SOCK" -n 20 -c 20 -k 1 --cwd "$T/w" -- python3 train.py --same >"$T/same"
cat "$T/same"
expect_eq "$(kv "$T/same" rc0)" 20 "identical requests answered OK (followers take no queue slot)"
expect_eq "$(( $(status_field cache misses) - misses0 ))" 1 "profiles run for 20 identical requests"
expect_eq "$(kv "$T/same" cached)" 19 "requests answered by the one profile"
stop_xmemd

log "fairness: xmemt1 floods a queue of 4; xmemt2's one estimate still queues and is answered"
ensure_user xmemt2
mkdir -m 0755 "$T/w2" && echo 'print(2)' >"$T/w2/train.py" && chown -R xmemt2 "$T/w2"
write_config "max_concurrent: 1" "max_per_user: 1" "queue_size: 4"
start_xmemd
runuser -u xmemt1 -- "$L" load "$SOCK" -n 20 -c 20 -k 20 --cwd "$T/w" -- python3 train.py --flood >"$T/flood" &
flood=$!
for _ in $(seq 100); do [ "$(status_field queue_depth)" = 4 ] && break; sleep 0.1; done
expect_eq "$(status_field queue_depth)" 4 "the flood filled the queue"
runuser -u xmemt2 -- "$L" estimate "$SOCK" --cwd "$T/w2" --deadline 60000 -- python3 train.py >"$T/other" 2>&1
expect_eq "$(kv "$T/other" name)" estimated "the other user's estimate ($(kv "$T/other" message))"
wait "$flood" || true
expect_eq "$(( $(kv "$T/flood" rc0) + $(kv "$T/flood" rc-3) ))" 20 "every flooding client answered (ok or busy)"
stop_xmemd
finish
