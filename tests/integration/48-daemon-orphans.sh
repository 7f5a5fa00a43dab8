#!/usr/bin/env bash
# kill -9 xmemd while a profile runs: the profile, running as the user, must die with it,
# and so must what it started in a session of its own. The kernel clears PR_SET_PDEATHSIG on
# a credential change, so a death signal set before setresuid() protects nothing; without it
# the profile ran on with no wall-time limit. A keeper killed by its own death signal left
# the escaped session to init (issue 26, L3): its death signal is a SIGTERM it handles.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
ensure_user xmemt1
mkdir -m 0755 "$T/w" && echo 'print(1)' >"$T/w/train.py" && chown -R xmemt1 "$T/w"
# The "profile": records its pid, then outlives any reasonable test.
cat >"$T/prof.sh" <<PROF
#!/bin/sh
setsid sh -c 'echo \$\$ >"$T/w/escaped.pid"; exec sleep 300' </dev/null >/dev/null 2>&1 &
echo \$\$ >"$T/w/profile.pid"
exec sleep 300
PROF
chmod 0755 "$T/prof.sh"
write_config
start_xmemd

runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/out" 2>&1 &
client=$!
for _ in $(seq 50); do [ -s "$T/w/profile.pid" ] && [ -s "$T/w/escaped.pid" ] && break; sleep 0.1; done
pid=$(cat "$T/w/profile.pid" 2>/dev/null) || fail "the profile did not start"
escaped=$(cat "$T/w/escaped.pid" 2>/dev/null) || fail "the profile's own session did not start"
trap 'kill -KILL $pid $escaped 2>/dev/null; cleanup' EXIT
expect_eq "$(ps -o sid= -p "$escaped" | tr -d ' ')" "$escaped" "the escaped process leads a session of its own"
expect_eq "$(stat -c %U /proc/$pid)" xmemt1 "the profile runs as the user"

log "kill -9 xmemd with the profile running"
kill -KILL "$XMEMD_PID"
wait "$XMEMD_PID" 2>/dev/null
XMEMD_PID=
for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
    fail "the profile (pid $pid, $(tr '\0' ' ' </proc/$pid/cmdline)) outlived xmemd"
fi
for _ in $(seq 30); do kill -0 "$escaped" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$escaped" 2>/dev/null; then
    fail "the profile's own session (pid $escaped) outlived xmemd"
fi
wait "$client" 2>/dev/null
echo "ok: a profile, and the session it started, die with xmemd"
