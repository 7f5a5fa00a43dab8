#!/usr/bin/env bash
# make bench-daemon: cache-hit throughput and latency of xmemd with 100 concurrent clients,
# and the daemon's RSS after 10 000 and after 100 000 requests (flat memory expected).
# Starts its own munged and xmemd in a temp dir (root: munged and the profile sandbox).
set -euo pipefail
B=${XMEM_BUILD:?XMEM_BUILD must name the build tree}/bin
N_TOTAL=${XMEM_BENCH_REQUESTS:-100000}
CLIENTS=${XMEM_BENCH_CLIENTS:-100}
T=$(mktemp -d /tmp/xmem-bench-daemon.XXXXXX)
chmod 0755 "$T"
XMEMD_PID= MUNGED_PID=
cleanup() {
    [ -n "$XMEMD_PID" ] && kill -TERM "$XMEMD_PID" 2>/dev/null && wait "$XMEMD_PID" 2>/dev/null
    [ -n "$MUNGED_PID" ] && kill -TERM "$MUNGED_PID" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

mkdir -m 0755 "$T/run" "$T/munge" "$T/w"
dd if=/dev/urandom of="$T/munge/key" bs=1024 count=1 status=none
chmod 0600 "$T/munge/key"
/usr/sbin/munged --socket="$T/munge/sock" --key-file="$T/munge/key" --pid-file="$T/munge/pid" \
    --log-file="$T/munge/log" --seed-file="$T/munge/seed" --num-threads=4
MUNGED_PID=$(cat "$T/munge/pid")
cat >"$T/prof.sh" <<'PROF'
#!/bin/sh
echo '{"peak_bytes": 1073741824, "limit_bytes": 1288490189, "fits": true, "gpu": "A100-40GB",
 "torch": "2.1", "mode": "fast", "profile_seconds": 0, "analyze_seconds": 0, "breakdown": {}}'
PROF
chmod 0755 "$T/prof.sh"
echo 'import torch' >"$T/w/train.py"
cat >"$T/xmem.yaml" <<EOF2
socket: $T/run/xmemd.sock
lockfile: $T/run/xmemd.lock
database: $T/ledger.sqlite
munge_socket: $T/munge/sock
profiler: [$T/prof.sh]
allow_root: true
EOF2
"$B/xmemd" --config "$T/xmem.yaml" --foreground 2>"$T/xmemd.log" &
XMEMD_PID=$!
for _ in $(seq 100); do [ -S "$T/run/xmemd.sock" ] && break; sleep 0.1; done
S=$T/run/xmemd.sock
rss() { awk '/^VmRSS/ {print $2}' "/proc/$XMEMD_PID/status"; }
load() { "$B/xmemd-load" load "$S" -n "$1" -c "$CLIENTS" --cwd "$T/w" -- python3 train.py; }
field() { sed -n "s/^$1=//p" "$2"; }

"$B/xmemd-load" estimate "$S" --cwd "$T/w" -- python3 train.py >/dev/null # the one profile
load 10000 >"$T/r1"
rss10=$(rss)
load $((N_TOTAL - 10001)) >"$T/r2"
rss100=$(rss)
rows=$(sqlite3 "$T/ledger.sqlite" "SELECT count(*) FROM requests")

echo "xmemd cache-hit benchmark ($CLIENTS concurrent clients, real socket, MUNGE signing, ledger commit per request)"
printf "  %-34s %12s %12s\n" "" "first 10k" "next $((N_TOTAL - 10001))"
printf "  %-34s %12s %12s\n" "requests/s" "$(field rps "$T/r1")" "$(field rps "$T/r2")"
printf "  %-34s %12s %12s\n" "p50 latency (ms)" "$(field p50_ms "$T/r1")" "$(field p50_ms "$T/r2")"
printf "  %-34s %12s %12s\n" "p99 latency (ms)" "$(field p99_ms "$T/r1")" "$(field p99_ms "$T/r2")"
printf "  %-34s %12s %12s\n" "answered OK" "$(field rc0 "$T/r1")" "$(field rc0 "$T/r2")"
printf "  %-34s %12s %12s\n" "daemon RSS after (KiB)" "$rss10" "$rss100"
echo "  ledger rows: $rows; RSS ratio 100k/10k: $(awk -v a="$rss100" -v b="$rss10" 'BEGIN {printf "%.2f", a / b}')"
echo "  targets: >= 5000 requests/s, p99 <= 20 ms, flat RSS; machine load now: $(cut -d' ' -f1-3 /proc/loadavg)"
