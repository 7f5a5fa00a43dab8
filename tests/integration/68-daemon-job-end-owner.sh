#!/usr/bin/env bash
# Issue 15, finding 11: a job_end report is bound to the job's own request. The request id
# comes from the job's environment, which its user sets, and slurmstepd reports as root: so
# xmemd checks whose job it was (job_uid, required from root) against the request's owner.
# Before the fix, root's report for xmemt2's job naming xmemt1's request was recorded.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_two_users
u1=$(id -u xmemt1); u2=$(id -u xmemt2)
mkdir -m 0755 "$T/w" && echo 'print(1)' >"$T/w/train.py"

log "each user gets an estimate"
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/a" || fail "xmemt1's estimate: $(cat "$T/a")"
runuser -u xmemt2 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/b" || fail "xmemt2's estimate: $(cat "$T/b")"
id1=$(kv "$T/a" id); id2=$(kv "$T/b" id)
expect_true "no request id for xmemt1" [ -n "$id1" ]
expect_true "no request id for xmemt2" [ -n "$id2" ]
expect_true "one request id for both users: '$id1'" [ "$id1" != "$id2" ]

log "root reports xmemt2's job, which names xmemt1's request"
expect_false "xmemt2's job was attached to xmemt1's request" \
    "$L" job-end "$SOCK" "$id1@$u2" 901 0 5 0 >"$T/c"
expect_true "message: $(cat "$T/c")" \
    grep -q "must come from its owner or root, for a job its owner ran (uid $u2" "$T/c"

log "root's report without the job's uid"
expect_false "root's report without job_uid was recorded" \
    "$L" job-end "$SOCK" "$id1" 902 0 5 0 >"$T/d"
expect_true "message: $(cat "$T/d")" grep -q "a report from root must name the job's uid" "$T/d"

log "xmemt2 claims to report xmemt1's job"
runuser -u xmemt2 -- "$L" job-end "$SOCK" "$id1@$u1" 903 0 5 0 >"$T/e" 2>&1 && fail "xmemt2 reported as xmemt1"
expect_true "message: $(cat "$T/e")" grep -q "only the node reports a job.s end" "$T/e"

log "a uid that names no one"
expect_false "job_uid 2^32-1 accepted" \
    "$L" job-end "$SOCK" "$id1@4294967295" 904 0 5 0 >"$T/f"
expect_true "message: $(cat "$T/f")" grep -q "job_uid: expected an integer" "$T/f"

expect_eq "$(sql "SELECT count(*) FROM jobs")" 0 "no forged job row"
expect_eq "$(status_field counters job_end_rejected)" 3 "job_end_rejected counter"

log "the node's reports are recorded with the job's uid"
"$L" job-end "$SOCK" "$id2@$u2" 905 0 5 0 >/dev/null || fail "root's report of xmemt2's own job"
"$L" job-end "$SOCK" "$id1@$u1" 906 0 5 0 >/dev/null || fail "root's report of xmemt1's own job"
expect_eq "$(sql "SELECT group_concat(request_id||':'||job_id||':'||job_uid, ' ') FROM (SELECT * FROM jobs ORDER BY job_id)")" \
    "$id2:905:$u2 $id1:906:$u1" "job rows"

log "issue 26 M3/M4: a user's report of their own job is not taken, however many"
for i in 1 2 3 4 5; do
    runuser -u xmemt1 -- "$L" job-end "$SOCK" "$id1" $((907 + i)) 0 5 0 >"$T/own$i" 2>&1 &&
        fail "xmemt1's own report $i was recorded"
done
expect_true "message: $(cat "$T/own1")" grep -q "only the node reports a job's end" "$T/own1"
expect_eq "$(sql "SELECT count(*) FROM jobs WHERE job_id > 906")" 0 "no rows from the user's own reports"
log "issue 26 L7: an account name the calibration file cannot hold is refused at its source"
"$L" job-end "$SOCK" "$id1@$u1" 920 0 5 0 'phy"sics' debug - >"$T/acct" 2>&1 && fail "an account with a quote was recorded"
expect_true "message: $(cat "$T/acct")" grep -q "account: expected 1 to 64 printable characters" "$T/acct"
log "one row per Slurm job: the node's second report of job 906 replaces the first"
"$L" job-end "$SOCK" "$id1@$u1" 906 0 9 0 >/dev/null || fail "root's second report of job 906"
expect_eq "$(sql "SELECT count(*)||':'||max(elapsed_seconds) FROM jobs WHERE job_id=906")" "1:9" "job 906's rows"
stop_xmemd
echo "ok"
