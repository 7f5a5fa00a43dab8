#!/usr/bin/env bash
# Malformed, truncated and oversized frames, wrong magic/version/type, a client that leaves
# mid-request, one that stalls, ones that never read: xmemd answers each with its numbered
# outcome, records it in the ledger, stays up, and holds no descriptor afterwards.
. "$(dirname "$0")/40-daemon.d/lib.sh"
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
start_munged
write_profiler 1
write_config "allow_root: true"
mkdir -m 0755 "$T/w" && echo 'print(1)' >"$T/w/t.py"
export RAW_CWD=$T/w
start_xmemd
R="python3 $(dirname "$0")/40-daemon.d/rawclient.py $SOCK"
fds_before=$(ls /proc/$XMEMD_PID/fd | wc -l)

check() { # CASE EXPECTED_REPLY
    got=$($R "$1") || fail "raw client crashed on $1"
    expect_eq "$got" "$2" "reply to $1"
    kill -0 "$XMEMD_PID" || fail "xmemd died on $1"
}
check bad-json bad_request
check not-object bad_request
check bad-fields bad_request
check bad-magic bad_frame
check bad-version bad_frame
check bad-type bad_frame
check reply-type bad_frame
check oversized frame_too_large
check trailing bad_frame
check flood-bytes bad_frame
check truncated noreply
check half-header noreply
check disconnect-mid-request noreply
check never-read noreply
log "a stalled client is cut off after the frame timeout"
check stall truncated_frame

sleep 2 # the abandoned estimate is stopped (its client left) and recorded
expect_eq "$(status_field counters bad_frame)" 6 "bad_frame counter"
expect_eq "$(status_field counters bad_request)" 3 "bad_request counter"
expect_eq "$(status_field counters frame_too_large)" 1 "frame_too_large counter"
expect_eq "$(status_field counters truncated_frame)" 3 "truncated_frame counter (2 cut + 1 stalled)"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE kind='frame' AND outcome IN (3,4,5)")" 10 "frame rows in the ledger"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE kind='frame' AND outcome_name='bad_request'")" 2 "bad bodies recorded"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE kind='estimate' AND outcome_name='bad_request'")" 1 "bad fields recorded"
expect_eq "$(sql "SELECT outcome_name FROM requests WHERE kind='estimate' AND cwd='$T/w' AND outcome=33")" client_gone "abandoned request still recorded, and stopped"
expect_eq "$(sql "SELECT uid FROM requests WHERE kind='frame' LIMIT 1")" 0 "frame rows carry the kernel's uid"
expect_eq "$(status_field connections)" 1 "only the status query's connection is open"
sleep 0.3
fds_after=$(ls /proc/$XMEMD_PID/fd | wc -l)
expect_eq "$fds_after" "$fds_before" "descriptors after the abuse"
"$L" estimate "$SOCK" --cwd "$T/w" -- python3 t.py >/dev/null || fail "xmemd no longer serves estimates"
stop_xmemd
echo "ok"
