#!/usr/bin/env bash
# Issue 15: what one user's text and numbers may do to the ledger and to other users.
# Finding 4: a user cannot fill the ledger's disk with refused requests. A refused request's
# argv, env and cwd are stored cut to a bound (defaults.h), whatever was sent.
# Finding 11: `xmem status` shows other users' command lines with control characters escaped;
# job_end refuses an exit status or an elapsed time out of range; an empty config is refused,
# and --check-config fails a missing estimator program.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_two_users
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
expect_true "12 refused requests stored $stored bytes of text (~5.8 MB sent)" [ "$stored" -lt 400000 ]

log "job_end out of range is refused"
mkdir -m 0755 "$T/w" && echo 'print(1)' >"$T/w/train.py" && chown -R xmemt1 "$T/w"
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py >"$T/e" || fail "estimate: $(cat "$T/e")"
id1=$(kv "$T/e" id)
u1=$(id -u xmemt1)
expect_false "job_end with exit_status 100000 accepted" \
    "$L" job-end "$SOCK" "$id1@$u1" 1 100000 5 0 >"$T/j1"
expect_false "job_end with elapsed -5 accepted" \
    "$L" job-end "$SOCK" "$id1@$u1" 1 0 -5 0 >"$T/j2"
# Slurm's job ids are 32-bit; 2^64-1 was once stored as -1 (issue 26, L8).
expect_eq "$(RAW_REQUEST=$id1 RAW_UID=$u1 python3 "$(dirname "$0")/40-daemon.d/rawclient.py" "$SOCK" job-end-huge-id)" bad_request \
    "job_end with job_id 2^64-1"
expect_eq "$(sql "SELECT count(*) FROM jobs")" 0 "no job row from out-of-range reports"
"$L" job-end "$SOCK" "$id1@$u1" 1 137 5 0 >/dev/null || fail "a killed task's job_end (137)"

log "issue 26 L5: secrets in argv and the environment never reach the ledger"
runuser -u xmemt1 -- env HF_Token=hf_envsecret CONDA_PASSWD=pw_envsecret HF_HOME=/tmp/hf \
    "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py --api-key=abc_argsecret --hf_token hf_argsecret \
    >"$T/sec" || fail "estimate with secrets: $(cat "$T/sec")"
expect_eq "$(sql "SELECT entrypoint FROM requests WHERE id=$(kv "$T/sec" id)")" \
    "python3 train.py --api-key=*** --hf_token ***" "the stored entrypoint"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE options LIKE '%secret%' OR entrypoint LIKE '%secret%'")" 0 \
    "ledger rows holding a secret"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE options LIKE '%/tmp/hf%'")" 1 "HF_HOME kept"
for f in "$DB" "$DB-wal"; do
    expect_eq "$(stat -c %a "$f")" 600 "mode of $(basename "$f")"
done

log "xmem status escapes another user's terminal controls"
sed -i 's|^sleep 0$|sleep 3|' "$T/prof.sh"
esc=$(printf 'x\033]0;owned\007\033[2J')
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py "$esc" >/dev/null &
EST=$!
sleep 1
runuser -u xmemt2 -- "$T/bin/xmem-status" -s "$SOCK" >"$T/s" || fail "xmem status"
wait "$EST"
expect_true "the in-flight request is not listed: $(cat "$T/s")" grep -q 'owned' "$T/s"
if grep -q "$(printf '\033')" "$T/s"; then fail "xmem status printed a raw ESC"; fi
stop_xmemd

log "an empty config is refused"
: >"$T/empty.yaml"
"$B/xmemd" --config "$T/empty.yaml" --check-config >"$T/c" 2>&1 && fail "an empty config passed --check-config"
expect_true "message: $(cat "$T/c")" grep -q "the config has no keys" "$T/c"

log "--check-config fails a missing estimator program"
sed "s|^estimator: .*|estimator: [$T/no-such-estimator, --json]|" "$T/xmem.yaml" >"$T/noest.yaml"
"$B/xmemd" --config "$T/noest.yaml" --check-config >"$T/c2" 2>&1 && fail "--check-config passed a missing estimator"
expect_true "message: $(cat "$T/c2")" grep -q "no-such-estimator is not an executable file" "$T/c2"
"$B/xmemd" --config "$T/xmem.yaml" --check-config >/dev/null || fail "--check-config refused a good config"
echo "ok"
