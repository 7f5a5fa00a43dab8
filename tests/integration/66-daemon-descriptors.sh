#!/usr/bin/env bash
# Issue 15, finding 7: descriptors. xmemd raises its soft open-file limit to the hard one, and
# one user holding idle connections cannot take the slots every other user needs: past
# k_max_connections_per_user (64) that user is answered too_many_connections.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
write_profiler 0
ensure_user xmemt1
ensure_user xmemt2
write_config "max_connections: 100"
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
[ -f "$T/h/held" ] || fail "the idle connections were not made"
sleep 0.5
log "xmemt2 still gets an estimate"
runuser -u xmemt2 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/b" || { cat "$T/b"; kill "$HOLD"; fail "xmemt2 was starved by xmemt1's idle connections"; }
[ "$(status_field counters too_many_connections)" -ge 40 ] || fail "xmemt1's connections past its bound were not refused"
kill "$HOLD" 2>/dev/null; wait "$HOLD" 2>/dev/null
stop_xmemd
echo "ok"
