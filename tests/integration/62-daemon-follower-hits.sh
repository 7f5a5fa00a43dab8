#!/usr/bin/env bash
# Issue 15, finding 11: a request that waited for an identical profile which then failed is
# no cache hit. Before, every follower of a failed leader counted as a hit, so the hit ratio
# rose while profiles failed.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
ensure_user xmemt1
cat >"$T/prof.sh" <<'PROF'
#!/bin/sh
sleep 1
echo "Traceback: the job failed" >&2
exit 1
PROF
chmod 0755 "$T/prof.sh"
write_config "max_concurrent: 2" "max_per_user: 2"
mkdir -m 0755 "$T/w" && echo 'print(1)' >"$T/w/train.py" && chown -R xmemt1 "$T/w"
start_xmemd

log "three identical requests; the one profile fails"
pids=
for i in 1 2 3; do
    runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/r$i" &
    pids="$pids $!"
    sleep 0.2
done
wait $pids
for i in 1 2 3; do expect_eq "$(kv "$T/r$i" name)" profile_failed "request $i"; done
expect_eq "$(status_field cache misses)" 1 "one profile ran"
expect_eq "$(status_field cache hits)" 0 "followers of a failed profile counted as cache hits"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE cached=1")" 0 "ledger rows marked cached"
stop_xmemd
echo "ok: a shared failure is not a cache hit"
