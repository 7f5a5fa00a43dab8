#!/usr/bin/env bash
# SIGHUP with a broken config keeps the old one and says why; a good change applies and
# clears the cache. SIGTERM drains: the request in flight is answered, then xmemd exits 0
# with no handle open. kill -9 during a write storm leaves a ledger that passes
# integrity_check and holds every request a client saw acknowledged.
. "$(dirname "$0")/40-daemon.d/lib.sh"
one_user_setup
write_config "max_concurrent: 2" "max_per_user: 2"
start_xmemd
# est OUT [ARGS...]: the test user's estimate, its reply in OUT (RUN_RC its status)
est() {
    local out=$1
    shift
    run_to "$out" runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" "$@" -- python3 train.py
}

log "SIGHUP with a broken config"
est "$T/a"
expect_rc 0 "first estimate"
cp "$T/xmem.yaml" "$T/good.yaml"
sed "s/^max_concurrent: 2$/max_concurrent: lots/" "$T/good.yaml" >"$T/xmem.yaml"
kill -HUP "$XMEMD_PID"
sleep 0.5
expect_true "no reason logged for the rejected reload" grep -q \
    "SIGHUP: keeping the previous config: $T/xmem.yaml:[0-9]*: max_concurrent: invalid integer: lots" "$T/xmemd.log"
expect_eq "$(status_field max_concurrent)" 2 "old config still in force"
est "$T/b"
[ "$RUN_RC" = 0 ] && expect_eq "$(kv "$T/b" cached)" 1 "cache kept after a rejected reload"

log "SIGHUP with a good, changed config"
sed 's/^max_per_user: 2$/max_per_user: 1/' "$T/good.yaml" >"$T/xmem.yaml"
kill -HUP "$XMEMD_PID"
sleep 0.5
expect_true "reload not logged" grep -q "SIGHUP: reloaded $T/xmem.yaml (changed; cache cleared)" "$T/xmemd.log"
expect_eq "$(status_field max_per_user)" 1 "new config in force"
est "$T/c"
[ "$RUN_RC" = 0 ] && expect_eq "$(kv "$T/c" cached)" 0 "config change invalidates the cache"

log "SIGTERM drains the profile in flight"
write_profiler 6
# The reply in flight is what a failed check prints.
log_watch "$T/d"
(est "$T/d" --steps 9; exit "$RUN_RC") &
client=$!
sleep 1
expect_eq "$(status_field running)" 1 "a profile is running"
kill -TERM "$XMEMD_PID"
sleep 0.3
expect_false "still listening while draining" [ -e "$SOCK" ]
expect_true "the in-flight request was not answered" wait "$client"
expect_eq "$(kv "$T/d" name)" estimated "drained request outcome"
rc=0; wait "$XMEMD_PID" || rc=$?; XMEMD_PID=
expect_eq "$rc" 0 "xmemd exit status after drain (3 = handles left open)"
expect_true "drain not logged" grep -q "Terminated: draining 1 request(s)" "$T/xmemd.log"

log "kill -9 during a write storm"
write_profiler 0
write_config "max_concurrent: 4" "max_per_user: 4"
start_xmemd --force
# 20 clients looping over one request (misses until the first profile lands, then hits);
# every acknowledged id is written down by the client as soon as it has the answer.
for i in $(seq 20); do
    runuser -u xmemt1 -- bash -c '
        for j in $(seq 500); do
            [ -e "$1/stop" ] && break
            "$2" estimate "$3" --cwd "$1/w" -- python3 train.py 2>/dev/null \
                | sed -n "s/^id=//p" | grep -v "^0$"
        done' storm "$T" "$L" "$SOCK" "$i" >"$T/acked.$i" &
done
sleep 8
kill -KILL "$XMEMD_PID"; XMEMD_PID=
touch "$T/stop"
wait 2>/dev/null
cat "$T"/acked.* | sort >"$T/acked"
n=$(wc -l <"$T/acked")
expect_true "too few acknowledged requests before the kill ($n)" [ "$n" -ge 5 ]
expect_eq "$(sql 'PRAGMA integrity_check')" ok "ledger integrity after kill -9"
sql "SELECT id FROM requests WHERE kind='estimate' AND outcome=0" | sort >"$T/stored"
missing=$(comm -23 "$T/acked" "$T/stored" | wc -l)
expect_eq "$missing" 0 "acknowledged requests missing from the ledger (of $n)"
log "$n acknowledged, all present; a restart after the crash takes its stale lock over"
start_xmemd
expect_true "no warning for the crashed daemon's lock taken over" \
    grep -q "taking over the stale lock .*which is not running" "$T/xmemd.log"
est /dev/null
expect_rc 0 "estimate after the crash"
stop_xmemd
finish
