#!/usr/bin/env bash
# Issue 15, finding 7: descriptors. xmemd raises its soft open-file limit to the hard one, and
# one user holding idle connections cannot take the slots every other user needs: past
# k_max_connections_per_user (64) that user is answered too_many_connections. The metrics
# port (open to every local user) closes a connection idle for k_metrics_timeout_ms (5 s),
# gives one user at most k_metrics_max_per_peer (4) and holds at most
# k_metrics_max_connections (16): past either, a connection is closed at once.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
write_profiler 0
ensure_user xmemt1
ensure_user xmemt2
PORT=$((20000 + RANDOM % 30000))
write_config "max_connections: 100" "metrics_listen: 127.0.0.1:$PORT"
ulimit -Sn 512 # below the hard limit: xmemd must not keep it
start_xmemd
read -r soft hard < <(awk '/^Max open files/ {print $4, $5}' "/proc/$XMEMD_PID/limits")
expect_eq "$soft" "$hard" "xmemd's soft open-file limit (started with 512, hard $hard)"

mkdir -m 0755 "$T/w" && echo 'print(1)' >"$T/w/train.py" && chown -R xmemt2 "$T/w"
mkdir -m 0755 "$T/h" && chown xmemt1 "$T/h"
cat >"$T/bin/hold.py" <<'PY'
import socket, sys, time
held = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    held.append(s)
open(sys.argv[3], "w").write("connected\n")
time.sleep(float(sys.argv[4]))
PY
log "xmemt1 opens 110 idle connections (max_connections is 100)"
runuser -u xmemt1 -- python3 "$T/bin/hold.py" "$SOCK" 110 "$T/h/held" 6 &
HOLD=$!
for _ in $(seq 50); do [ -f "$T/h/held" ] && break; sleep 0.1; done
expect_true "the idle connections were not made" [ -f "$T/h/held" ]
sleep 0.5
log "xmemt2 still gets an estimate"
runuser -u xmemt2 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/b" || { kill "$HOLD"; fail "xmemt2 was starved by xmemt1's idle connections: $(cat "$T/b")"; }
expect_true "xmemt1's connections past its bound were not refused" \
    [ "$(status_field counters too_many_connections)" -ge 40 ]
kill "$HOLD" 2>/dev/null; wait "$HOLD" 2>/dev/null

log "the metrics port: one user's share, the global bound, the idle deadline"
cat >"$T/bin/metrics_idle.py" <<'PY'
import socket, sys, time, urllib.request
port, case = int(sys.argv[1]), sys.argv[2]

def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s, time.monotonic()

def scrape():
    return urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10).read().decode()

def closes_within(s, seconds):  # the server closed it (EOF or reset) within `seconds`
    s.settimeout(seconds)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False

if case == "hold":  # N idle connections for SECONDS, then "held" on stdout
    conns = [connect() for _ in range(int(sys.argv[3]))]
    print("held", flush=True)
    time.sleep(float(sys.argv[4]))
    sys.exit(0)
if case == "extra":  # one more connection: closed at once
    extra, _ = connect()
    assert closes_within(extra, 1.0), "a connection past the bound was kept open"
    print("ok")
    sys.exit(0)
# "share": a user's 4 connections (k_metrics_max_per_peer), a 5th closed at once, the idle
# ones closed after ~5 s (k_metrics_timeout_ms)
idle = [connect() for _ in range(3)]
time.sleep(0.3)
assert "xmemd_requests_total" in scrape(), "no scrape beside 3 idle connections of the same user"
time.sleep(0.3)  # the scrape's slot is released when its handles close
idle.append(connect())
time.sleep(0.3)
extra, _ = connect()
assert closes_within(extra, 1.0), "a user's 5th connection was kept open"
for s, opened in idle:
    assert closes_within(s, 10), "an idle connection was kept open past 10 s"
    held = time.monotonic() - opened
    assert 4.0 < held < 8.0, "an idle connection was closed after %.1f s, not ~5" % held
assert "xmemd_requests_total" in scrape(), "no scrape after the idle connections were closed"
print("ok")
PY
runuser -u xmemt1 -- python3 "$T/bin/metrics_idle.py" "$PORT" share >"$T/m" 2>&1 || fail "metrics port: $(tail -n 3 "$T/m")"
# The global bound (16): four users hold their 4 each; a 17th, from root, is closed at once.
ensure_user xmemt3
ensure_user xmemt4
holders=()
for u in xmemt1 xmemt2 xmemt3 xmemt4; do
    runuser -u "$u" -- python3 "$T/bin/metrics_idle.py" "$PORT" hold 4 4 >"$T/hold-$u" 2>&1 &
    holders+=($!)
done
for u in xmemt1 xmemt2 xmemt3 xmemt4; do
    for _ in $(seq 50); do [ -s "$T/hold-$u" ] && break; sleep 0.1; done
    expect_true "$u's connections: $(cat "$T/hold-$u")" grep -q held "$T/hold-$u"
done
python3 "$T/bin/metrics_idle.py" "$PORT" extra >"$T/m17" 2>&1 || fail "metrics port, 17th: $(tail -n 3 "$T/m17")"
wait "${holders[@]}"
stop_xmemd
echo "ok"
