#!/usr/bin/env bash
# Issue 15, finding 2: the cache key's memo of file digests is bounded, and keyed by the file,
# not by the path as spelled. A 4 MiB "import a,a,a,..." asked for as ./f.py, ././f.py, ...
# once added ~65 MiB of RSS per request, never released.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
write_profiler 0
ensure_user xmemt1
write_config
start_xmemd

mkdir -m 0755 "$T/w"
python3 -c 'import sys; sys.stdout.write("import " + "a," * (2 * 1024 * 1024 - 8) + "a\n")' >"$T/w/f.py"
chown -R xmemt1 "$T/w"
sleep 2.2 # older than the memo's settle time, so the digest is remembered
rss() { awk '/^VmRSS/ {print $2}' "/proc/$XMEMD_PID/status"; }
before=$(rss)
log "xmemt1 asks for one 4 MiB script under 6 spellings (RSS before: $before KiB)"
p=f.py
for _ in $(seq 6); do
    p=./$p
    runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 "$p" >"$T/r" || fail "estimate of $p: $(cat "$T/r")"
done
after=$(rss)
log "RSS after: $after KiB"
expect_true "RSS grew by $(((after - before) / 1024)) MiB for one 4 MiB file" \
    [ $((after - before)) -lt 40960 ]
stop_xmemd
echo "ok"
