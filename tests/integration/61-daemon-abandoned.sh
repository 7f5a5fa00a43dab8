#!/usr/bin/env bash
# Issue 15, finding 3: work ends when its last waiter leaves, and what one user has in flight
# is bounded. Before, a client that disconnected left its estimate queued or profiling, the
# followers of an identical request took no slot, and 400 such requests with 1 MB argv took
# 390 MiB, then `xmem status` built a 384 MB reply listing every argv.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
write_profiler 20
ensure_user xmemt1
ensure_user xmemt2
ensure_user xmemt3
ensure_user xmemt4
write_config "max_concurrent: 1" "max_per_user: 1" "queue_size: 1000"
mkdir -m 0755 "$T/w" && echo 'print(1)' >"$T/w/train.py" && chown -R xmemt1 "$T/w"
start_xmemd

# hold.py SOCKET N ARGV_BYTES same|distinct SECONDS: N estimates on N connections, replies
# read for 1 s (prints "outcome_name count" lines), then every connection held SECONDS and
# closed without reading more.
cat >"$T/hold.py" <<'PY'
import collections, json, select, socket, struct, sys, time
path, n, size, mode, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
socks = []
for i in range(n):
    argv = ["python3", "train.py", "x" * size] + ([] if mode == "same" else ["--v=%d" % i])
    body = json.dumps({"argv": argv, "cwd": sys.argv[6]}).encode()
    s = socket.socket(socket.AF_UNIX); s.connect(path)
    s.sendall(struct.pack(">IHHII", 0x584D454D, 1, 1, len(body), 0) + body)
    socks.append(s)
got = collections.Counter()
end = time.time() + 1.0
pending = list(socks)
while pending and time.time() < end:
    r, _, _ = select.select(pending, [], [], max(0, end - time.time()))
    for s in r:
        data = b""
        s.settimeout(5)
        while len(data) < 16:
            c = s.recv(16 - len(data))
            if not c: break
            data += c
        if len(data) == 16:
            length = struct.unpack(">IHHII", data)[3]
            b = b""
            while len(b) < length:
                c = s.recv(length - len(b))
                if not c: break
                b += c
            got[json.loads(b)["outcome_name"]] += 1
        pending.remove(s)
for k, v in sorted(got.items()):
    print(k, v, flush=True)
print("held", len(pending), flush=True)
time.sleep(hold)
for s in socks:
    s.close()
PY

pids=
rows() { sql "SELECT count(*) FROM requests WHERE kind='estimate' AND outcome_name='$1'"; }
wait_rows() { # wait_rows NAME COUNT SECONDS
    for _ in $(seq $(($3 * 10))); do [ "$(rows "$1")" -ge "$2" ] && return 0; sleep 0.1; done
    fail "expected $2 '$1' rows within $3 s, got $(rows "$1")"
}

log "a running profile whose client leaves is killed; a queued one leaves the queue"
runuser -u xmemt1 -- python3 "$T/hold.py" "$SOCK" 1 10 distinct 1 "$T/w" >/dev/null & pids="$pids $!"
sleep 0.5
runuser -u xmemt1 -- python3 "$T/hold.py" "$SOCK" 1 11 distinct 0.5 "$T/w" >/dev/null & pids="$pids $!"
wait $pids; pids=
wait_rows client_gone 2 5
expect_eq "$(status_field running)" 0 "nothing running after both clients left"
expect_eq "$(status_field queue_depth)" 0 "queue empty after both clients left"
for _ in $(seq 20); do pgrep -u xmemt1 -f "sleep 20" >/dev/null || break; sleep 0.1; done
pgrep -u xmemt1 -f "sleep 20" >/dev/null && { ps -u xmemt1 -o pid,ppid,etimes,cmd; fail "the abandoned profile still runs"; }

log "a profile with an identical request still waiting goes on; it ends when the last one leaves"
runuser -u xmemt1 -- python3 "$T/hold.py" "$SOCK" 1 12 same 1 "$T/w" >/dev/null & pids="$pids $!"
sleep 0.3
runuser -u xmemt1 -- python3 "$T/hold.py" "$SOCK" 1 12 same 3 "$T/w" >/dev/null & pids="$pids $!"
sleep 2.5
expect_eq "$(status_field running)" 1 "the profile runs on for the follower"
wait $pids; pids=
wait_rows client_gone 4 5
expect_eq "$(status_field running)" 0 "nothing running once the follower left too"

log "per-user bounds count identical requests too: 60 x 100 KB from one user"
runuser -u xmemt2 -- python3 "$T/hold.py" "$SOCK" 60 100000 same 2 "$T/w" >"$T/same" 2>&1 & pids="$pids $!"
sleep 1.5
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" --deadline 1000 -- python3 other.py >"$T/other"
wait $pids; pids=
cat "$T/same"
refused=$(sed -n 's/^too_many_in_flight //p' "$T/same")
expect_true "identical requests beyond the bytes bound were not refused" [ "${refused:-0}" -ge 15 ]
expect_false "another user was refused for xmemt2's load" grep -q "too_many_in_flight" "$T/other"

log "status stays small under 400 queued requests with 10 KB argv, from 4 users"
for u in xmemt1 xmemt2 xmemt3 xmemt4; do
    runuser -u $u -- python3 "$T/hold.py" "$SOCK" 100 10000 distinct 4 "$T/w" >"$T/many.$u" 2>&1 & pids="$pids $!"
done
sleep 3
"$T/bin/xmem-status" -s "$SOCK" --json >"$T/status.json" || fail "status under load"
size=$(stat -c %s "$T/status.json")
wait $pids; pids=
cat "$T"/many.*
echo "status reply: $size bytes"
expect_true "status reply of $size bytes under 400 queued requests" [ "$size" -lt 65536 ]
python3 - "$T/status.json" <<'PY' || fail "status does not summarise the rest per user"
import json, sys
d = json.load(open(sys.argv[1]))
listed = [e for e in d["in_flight"] if "more" not in e["state"]]
rest = sum(e.get("count", 0) for e in d["in_flight"] if "more" in e["state"])
assert len(listed) <= 50, len(listed)
assert len(listed) + rest >= 100, (len(listed), rest)  # far more in flight than listed
assert all(len(e["entrypoint"]) <= 203 for e in listed)
PY
"$T/bin/xmem-status" -s "$SOCK" >/dev/null || fail "human status"
for _ in $(seq 50); do [ "$(status_field queue_depth)" = 0 ] && break; sleep 0.1; done
expect_eq "$(status_field queue_depth)" 0 "queue empty after the 400 clients left"
stop_xmemd
echo "ok: abandoned work ends, per-user bounds hold, status is summarised"
