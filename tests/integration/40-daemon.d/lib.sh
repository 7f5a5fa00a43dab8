# lib.sh — helpers shared by the daemon's integration tests (TESTS, area daemon), built on
# lib/assert.bash. Each test sources this, gets a private temp dir with its own munged and
# xmemd, and everything it started is stopped by pid on exit. Failures (fail) print the
# daemon log tail.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib/assert.bash"
B=${XMEM_BUILD:?XMEM_BUILD must name the build tree}/bin
SRC=${XMEM_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
[ -x "$B/xmemd" ] || { echo "xmemd is not built in $B"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "needs root (test users, munged, setuid profiles)"; exit 77; }

T=$(mktemp -d /tmp/xmem-it-daemon.XXXXXX)
chmod 0755 "$T"
mkdir -m 0755 "$T/run" "$T/bin"
# Test users must reach the client binary wherever the build tree lives.
cp "$B/xmemd-load" "$B/xmem-status" "$T/bin/"
L=$T/bin/xmemd-load
SOCK=$T/run/xmemd.sock
DB=$T/ledger.sqlite
XMEMD_PID= MUNGED_PID=

log_watch "$T/xmemd.log"

log() { echo "--- $*"; }

cleanup() {
    [ -n "$XMEMD_PID" ] && kill -KILL "$XMEMD_PID" 2>/dev/null
    [ -n "$MUNGED_PID" ] && kill -TERM "$MUNGED_PID" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

# A private munged (own key, socket, pid file) so tests never touch the system's.
start_munged() {
    mkdir -m 0755 "$T/munge"
    dd if=/dev/urandom of="$T/munge/key" bs=1024 count=1 status=none
    chmod 0600 "$T/munge/key"
    /usr/sbin/munged --socket="$T/munge/sock" --key-file="$T/munge/key" \
        --pid-file="$T/munge/pid" --log-file="$T/munge/log" --seed-file="$T/munge/seed" \
        || fail "munged did not start"
    MUNGED_PID=$(cat "$T/munge/pid")
    chmod 0755 "$T/munge"
}

# write_config [extra yaml lines...] — the estimator defaults to $T/prof.sh
write_config() {
    local line key given=" "
    for line in "$@"; do given+="${line%%:*} "; done
    {
        # A default the caller also gives is left out: xmemd refuses a key given twice.
        for line in "socket: $SOCK" "lockfile: $T/run/xmemd.lock" "database: $DB" \
                    "munge_socket: $T/munge/sock" "estimator: [$T/prof.sh, --json]"; do
            key=${line%%:*}
            [[ $given == *" $key "* ]] || echo "$line"
        done
        for line in "$@"; do echo "$line"; done
    } >"$T/xmem.yaml"
}

# A trivial profiler printing the JSON contract; PEAK and the sleep come from its env file.
write_profiler() {
    local sleep_s=${1:-0}
    cat >"$T/prof.sh" <<PROF
#!/bin/sh
sleep $sleep_s
echo "profiler argv: \$*" >&2
cat <<JSON
{"peak_bytes": 1073741824, "limit_bytes": 1288490189, "fits": true, "gpu": "A100-40GB",
 "torch": "2.1", "mode": "fast", "profile_seconds": $sleep_s, "analyze_seconds": 0.01,
 "breakdown": {"uid": \$(id -u), "groups": "\$(id -G)", "cwd": "\$(pwd)", "argv": "\$*"}}
JSON
PROF
    chmod 0755 "$T/prof.sh"
}

start_xmemd() {
    "$B/xmemd" --config "$T/xmem.yaml" --foreground "$@" >>"$T/xmemd.log" 2>&1 &
    XMEMD_PID=$!
    for _ in $(seq 100); do
        [ -S "$SOCK" ] && "$T/bin/xmem-status" -s "$SOCK" >/dev/null 2>&1 && return 0
        kill -0 "$XMEMD_PID" 2>/dev/null || fail "xmemd exited at start"
        sleep 0.1
    done
    fail "xmemd did not come up"
}

# Stops xmemd with SIGTERM; its exit status must be 0 (3 = handles left open at exit).
stop_xmemd() {
    kill -TERM "$XMEMD_PID"
    local rc=0
    wait "$XMEMD_PID" || rc=$?
    XMEMD_PID=
    [ "$rc" = 0 ] || fail "xmemd exited with status $rc after SIGTERM"
    grep -q "stopping xmemd" "$T/xmemd.log" || fail "no stop line in the log"
}

# status_field KEY [KEY2] — a number from `xmem status --json` (nested with KEY2)
status_field() {
    "$T/bin/xmem-status" -s "$SOCK" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in sys.argv[1:]:
    d = d[k]
print(d)' "$@"
}

sql() { sqlite3 "$DB" "$@"; }

# kv FILE KEY — value of KEY=... in xmemd-load output
kv() { sed -n "s/^$2=//p" "$1" | head -n 1; }

ensure_user() {
    id "$1" >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin "$1" \
        || fail "cannot create test user $1"
    CLEANUP_USERS="${CLEANUP_USERS:-} $1"
}

# one_user_setup — munged, an instant fake profiler, the user xmemt1 and its work dir $T/w
# holding a train.py; the config and xmemd are the caller's.
one_user_setup() {
    start_munged
    write_profiler 0
    ensure_user xmemt1
    mkdir -m 0755 "$T/w" && echo 'print(1)' >"$T/w/train.py" && chown -R xmemt1 "$T/w"
}

# start_two_users — the set-up of the per-user hardening tests: munged, an instant fake
# profiler, the users xmemt1 and xmemt2, the default config and xmemd.
start_two_users() {
    start_munged
    write_profiler 0
    ensure_user xmemt1
    ensure_user xmemt2
    write_config
    start_xmemd
}

# use_real_estimator USER [extra yaml lines...] — skips (77) unless the built xmem-estimate
# and a python3 with torch are there and USER can reach the build tree, then writes a config
# whose estimator is the real one. An ASan-built estimator reserves ~16 TiB of shadow address
# space at start: under SANITIZE=1 the address-space limit is raised so that the limit, not
# ASan, is what a test exercises.
use_real_estimator() {
    local user=$1
    shift
    [ -x "$B/xmem-estimate" ] || { echo "xmem-estimate is not built in $B"; exit 77; }
    "${XMEM_PYTHON:-/usr/bin/python3}" -c 'import torch' 2>/dev/null ||
        { echo "${XMEM_PYTHON:-/usr/bin/python3} cannot import torch (make deps installs python3-torch)"; exit 77; }
    runuser -u "$user" -- test -x "$B/xmem-estimate" ||
        { echo "the build tree $XMEM_BUILD is not reachable by a test user"; exit 77; }
    local as_mb=32768
    nm -D "$B/xmem-estimate" 2>/dev/null | grep -q ' U __asan_' && as_mb=$((64 << 20))
    write_config "estimator: [$B/xmem-estimate, --json]" \
        "limits: {wall_seconds: 300, cpu_seconds: 600, address_space_mb: $as_mb, processes: 512}" "$@"
}
