#!/usr/bin/env bash
# Issue 15, findings 1 and 11: what a profile prints is bounded before it is parsed. A profile
# runs the user's code (LD_LIBRARY_PATH reaches it), so it can print anything: a `breakdown`
# nested 120 000 deep once overflowed the root daemon's stack, and a `gpu` carrying
# "uid=N limit=1" went into the signed payload. Both are refused as profile_bad_output, in
# one line, and xmemd serves the next request. A request body nested as deep is refused too.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
ensure_user xmemt1
mkdir -m 0755 "$T/w" && echo 'print(1)' >"$T/w/train.py" && chown -R xmemt1 "$T/w"
# The profiler prints what the request's first argument names: deep, badgpu, or good.
cat >"$T/prof.sh" <<'PROF'
#!/bin/sh
for a in "$@"; do case "$a" in deep|badgpu|good) kind=$a ;; esac; done
python3 - "$kind" <<'PY'
import sys
kind = sys.argv[1]
if kind == "deep":
    n = 120000
    breakdown = "[" * n + "]" * n
else:
    breakdown = '{"weights": 1}'
gpu = "A100-40GB uid=0 limit=1" if kind == "badgpu" else "A100-40GB"
sys.stdout.write('{"peak_bytes": 1073741824, "limit_bytes": 1288490189, "fits": true, '
                 '"gpu": "%s", "torch": "2.1", "mode": "fast", "profile_seconds": 0, '
                 '"analyze_seconds": 0, "breakdown": %s}' % (gpu, breakdown))
PY
PROF
chmod 0755 "$T/prof.sh"
write_config
start_xmemd

ask() { runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py "$1" >"$T/$1" 2>&1; }

log "a breakdown nested 120 000 deep"
ask deep
kill -0 "$XMEMD_PID" 2>/dev/null || fail "xmemd died on a deeply nested profile output"
expect_eq "$(kv "$T/deep" name)" profile_bad_output "deep output outcome"
expect_true "no depth message: $(cat "$T/deep")" grep -q "^message=xmem: .*nested deeper than" "$T/deep"

log "a gpu name that carries k=v fields"
ask badgpu
expect_eq "$(kv "$T/badgpu" name)" profile_bad_output "gpu with '=' outcome"
expect_eq "$(kv "$T/badgpu" decision)" "" "no decision for a bad gpu name"

log "a request body nested 100 000 deep"
python3 - "$SOCK" >"$T/body" <<'PY' || fail "raw client"
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(sys.argv[1])
body = b'{"argv": ["python3"], "cwd": "/tmp", "x": ' + b"[" * 100000 + b"]" * 100000 + b"}"
s.sendall(struct.pack(">IHHII", 0x584D454D, 1, 1, len(body), 0) + body)
hdr = b""
while len(hdr) < 16:
    c = s.recv(16 - len(hdr))
    if not c: print("noreply"); sys.exit(0)
    hdr += c
n = struct.unpack(">IHHII", hdr)[3]
data = b""
while len(data) < n:
    data += s.recv(n - len(data))
print(json.loads(data)["outcome_name"])
PY
kill -0 "$XMEMD_PID" 2>/dev/null || fail "xmemd died on a deeply nested request body"
expect_eq "$(cat "$T/body")" bad_request "deep request body"

log "xmemd still serves estimates, with the breakdown in the reply"
ask good
expect_eq "$(kv "$T/good" name)" estimated "a good estimate after the abuse"
stop_xmemd
echo "ok: profile output and request bodies are bounded before they are parsed"
