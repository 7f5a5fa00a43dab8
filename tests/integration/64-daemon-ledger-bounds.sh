#!/usr/bin/env bash
# Issue 15, finding 4: a user cannot fill the ledger's disk with refused requests. A refused
# request's argv, env and cwd are stored cut to a bound (defaults.h), whatever was sent.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
write_profiler 0
ensure_user xmemt1
write_config
start_xmemd
u1=$(id -u xmemt1)

# 12 requests of ~480 KB each (4 arguments of 120 KB: under the kernel's per-argument limit),
# all refused: the working directory does not exist.
arg=$(head -c 120000 /dev/zero | tr '\0' a)
log "xmemt1 sends 12 refused requests of ~480 KB"
for _ in $(seq 12); do
    runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/missing" -- python3 train.py \
        "$arg" "$arg" "$arg" "$arg" >"$T/r" && fail "a request in a missing directory was estimated"
done
expect_eq "$(kv "$T/r" name)" cwd_unusable "refusal"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE uid=$u1 AND outcome=8")" 12 "every refusal is recorded"
stored=$(sql "SELECT sum(length(cwd)+length(entrypoint)+length(script)+length(options)+length(message))
              FROM requests WHERE uid=$u1")
[ "$stored" -lt 400000 ] || fail "12 refused requests stored $stored bytes of text (~5.8 MB sent)"
stop_xmemd
echo "ok"
