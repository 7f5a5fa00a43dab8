#!/usr/bin/env bash
# kill -9 xmemd while a profile runs: the profile, running as the user, must die with it,
# and so must what it started in a session of its own, ignoring SIGTERM and SIGHUP. The
# kernel clears PR_SET_PDEATHSIG on a credential change, so a death signal set before
# setresuid() protects nothing; without it the profile ran on with no wall-time limit. A
# keeper killed by its own death signal left the escaped session to init (issue 26, L3): its
# death signal is a SIGTERM it handles. Then kill -9 xmemd and its keeper together, as
# `pkill -9 xmemd` does (the keeper is a fork of xmemd, with its name): no process is left
# to kill the escaped session but the kernel, which kills everything in the profile's PID
# namespace when the namespace's init dies with the keeper (sandbox_namespace.h).
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
ensure_user xmemt1
mkdir -m 0755 "$T/w" && echo 'print(1)' >"$T/w/train.py" && chown -R xmemt1 "$T/w"
# The "profile" outlives any reasonable test, and so does its escaped session. In a PID
# namespace their own pids are not the host's: the test finds them by their sleeps' unique
# arguments.
mark=$$
cat >"$T/prof.sh" <<PROF
#!/bin/sh
setsid sh -c 'trap "" TERM HUP; exec sleep 300.$mark' </dev/null >/dev/null 2>&1 &
exec sleep 301.$mark
PROF
chmod 0755 "$T/prof.sh"
write_config
pids=
trap 'kill -KILL $pids 2>/dev/null; cleanup' EXIT
find_sleep() { pgrep -u xmemt1 -x -f "sleep $1.$mark"; }

# start_profile: starts xmemd and a profile; sets pid (the profile) and escaped.
start_profile() {
    start_xmemd
    runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/out" 2>&1 &
    client=$!
    pid= escaped=
    for _ in $(seq 50); do
        pid=$(find_sleep 301) && escaped=$(find_sleep 300) && break
        sleep 0.1
    done
    [ -n "$pid" ] || fail "the profile did not start"
    [ -n "$escaped" ] || fail "the profile's own session did not start"
    pids="$pids $pid $escaped"
    expect_eq "$(ps -o sid= -p "$escaped" | tr -d ' ')" "$escaped" "the escaped process leads a session of its own"
    expect_eq "$(stat -c %U /proc/$pid)" xmemt1 "the profile runs as the user"
}

# expect_gone WHAT PID...
expect_gone() {
    local what=$1 p
    shift
    for p in "$@"; do
        for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$p" 2>/dev/null; then
            fail "$what (pid $p, $(tr '\0' ' ' </proc/$p/cmdline)) outlived xmemd"
        fi
    done
}

log "kill -9 xmemd with the profile running"
start_profile
kill -KILL "$XMEMD_PID"
wait "$XMEMD_PID" 2>/dev/null
XMEMD_PID=
expect_gone "the profile" "$pid"
expect_gone "the profile's own session" "$escaped"
wait "$client" 2>/dev/null

log "kill -9 xmemd and its keeper with the profile running"
start_profile
keeper=$(ps -o pid= --ppid "$XMEMD_PID" | tr -d ' ')
[ -n "$keeper" ] && [ "$(ps -o comm= -p "$keeper")" = xmemd ] || fail "no keeper under xmemd ($keeper)"
kill -KILL "$XMEMD_PID" "$keeper"
wait "$XMEMD_PID" 2>/dev/null
XMEMD_PID=
expect_gone "the profile" "$pid"
expect_gone "the profile's own session" "$escaped"
wait "$client" 2>/dev/null
echo "ok: a profile, and the session it started, die with xmemd, and with its keeper"
