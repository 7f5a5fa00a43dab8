#!/usr/bin/env bash
# Issue 15, finding 5: the cache is per user. A second user's Python path (usercustomize.py,
# ~/.local) changes what the same script allocates, so an estimate profiled for one user is
# never served to, or signed for, another, even for a world-readable script both can read.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_two_users
u1=$(id -u xmemt1); u2=$(id -u xmemt2)

# xmemt2's script, world-readable in a traversable directory.
mkdir -m 0755 "$T/shared" && echo 'print(1)' >"$T/shared/train.py"
chmod 0644 "$T/shared/train.py" && chown -R xmemt2 "$T/shared"

log "xmemt1 profiles xmemt2's world-readable script first"
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/shared" -- python3 train.py >"$T/a" || fail "xmemt1's estimate: $(cat "$T/a")"
expect_eq "$(kv "$T/a" cached)" 0 "first request profiles"

log "xmemt2 asks for the same request: it must be profiled as xmemt2, not served xmemt1's"
runuser -u xmemt2 -- "$L" estimate "$SOCK" --cwd "$T/shared" -- python3 train.py >"$T/b" || fail "xmemt2's estimate: $(cat "$T/b")"
expect_eq "$(kv "$T/b" cached)" 0 "another user's result served from the cache"
id2=$(kv "$T/b" id)
bd=$(sql "SELECT breakdown FROM requests WHERE id=$id2")
python3 -c 'import json,sys; b=json.loads(sys.argv[1]); assert b["uid"]==int(sys.argv[2]), b' "$bd" "$u2" \
    || fail "xmemt2's estimate was profiled as someone else: $bd"
expect_eq "$(sql "SELECT count(DISTINCT cache_key) FROM requests WHERE kind='estimate' AND outcome=0")" 2 "one key per user"

log "each user's own repeat is still a hit"
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/shared" -- python3 train.py >"$T/c" || fail "xmemt1 again"
expect_eq "$(kv "$T/c" cached)" 1 "xmemt1's repeat"
runuser -u xmemt2 -- "$L" estimate "$SOCK" --cwd "$T/shared" -- python3 train.py >"$T/d" || fail "xmemt2 again"
expect_eq "$(kv "$T/d" cached)" 1 "xmemt2's repeat"
expect_eq "$(sql "SELECT uid FROM requests WHERE id=$(kv "$T/d" id)")" "$u2" "ledger uid"
: "$u1"
stop_xmemd
echo "ok"
