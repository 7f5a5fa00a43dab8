#!/usr/bin/env bash
# Profiles run as the requesting user (uid, gid, supplementary groups), in the user's cwd,
# and create files the user owns; a user never gets another user's unreadable script read
# (for the cache key or the profile); job_end only from the owner or root.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
write_profiler 0
ensure_user xmemt1
ensure_user xmemt2
getent group xmemtg >/dev/null || groupadd xmemtg
usermod -a -G xmemtg xmemt1
write_config
start_xmemd
u1=$(id -u xmemt1); u2=$(id -u xmemt2); g=$(getent group xmemtg | cut -d: -f3)

mkdir -m 0700 "$T/home1" && echo 'print(1)' >"$T/home1/train.py" && chown -R xmemt1 "$T/home1"
# The profiler leaves a file in cwd to show who it ran as.
sed -i 's|^sleep 0$|touch profile-was-here|' "$T/prof.sh"

log "xmemt1 profiles in its private directory"
# The owner's reply is what a failed check prints.
log_watch "$T/a"
run_to "$T/a" runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/home1" -- python3 train.py
expect_rc 0 "owner's estimate"
expect_eq "$(stat -c %u "$T/home1/profile-was-here")" "$u1" "owner of the profile's file"
bd=$(sql "SELECT breakdown FROM requests WHERE uid=$u1 AND outcome=0")
expect_true "profile identity: $bd" python3 - "$bd" "$u1" "$g" "$T/home1" <<'PY'
import json, sys
b = json.loads(sys.argv[1])
assert b["uid"] == int(sys.argv[2]), b
assert sys.argv[3] in b["groups"].split(), b      # supplementary group from initgroups
assert b["cwd"] == sys.argv[4], b
PY

log "xmemt2 asks for xmemt1's private script"
run_to "$T/b" runuser -u xmemt2 -- "$L" estimate "$SOCK" --cwd "$T/home1" -- python3 train.py
expect_true "xmemt2 got an estimate of xmemt1's private script" [ "$RUN_RC" != 0 ]
expect_eq "$(kv "$T/b" name)" cwd_unusable "other user's private directory"
chmod 0711 "$T/home1" # traversable, script still 0644 → make the script private
chmod 0600 "$T/home1/train.py"
run_to "$T/c" runuser -u xmemt2 -- "$L" estimate "$SOCK" --cwd "$T/home1" -- python3 train.py
expect_true "xmemt2 read xmemt1's 0600 script" [ "$RUN_RC" != 0 ]
expect_eq "$(kv "$T/c" name)" script_unreadable "other user's unreadable script"
expect_true "no reason given: $(cat "$T/c")" grep -q "Permission denied" "$T/c"
# Even though root's daemon could read it, and the same request is cached for xmemt1:
run_to "$T/d" runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/home1" -- python3 train.py
expect_rc 0 "owner again"
run_to "$T/e" runuser -u xmemt2 -- "$L" estimate "$SOCK" --cwd "$T/home1" -- python3 train.py
expect_true "cache answered a user who cannot read the script" [ "$RUN_RC" != 0 ]
expect_eq "$(sql "SELECT count(*) FROM requests WHERE uid=$u2 AND outcome=0")" 0 "no estimate for xmemt2"

log "the message cannot choose the uid"
cp "$(dirname "$0")/40-daemon.d/rawclient.py" "$T/bin/" && chmod 0755 "$T/bin/rawclient.py"
RAW_CWD=$T/home1 python3 "$T/bin/rawclient.py" "$SOCK" claim-root >"$T/f"
expect_eq "$(cat "$T/f")" root_refused "request from root claiming uid 0 (root is refused by config)"
runuser -u xmemt2 -- env RAW_CWD="$T/home1" python3 "$T/bin/rawclient.py" "$SOCK" claim-root >"$T/g"
expect_eq "$(cat "$T/g")" script_unreadable "xmemt2 claiming uid 0 is still xmemt2"
expect_eq "$(sql "SELECT uid FROM requests ORDER BY id DESC LIMIT 1")" "$u2" "ledger uid from the kernel"

log "issue 26 M1: no path through another user's /proc/PID/cwd"
# A readable project directory inside xmemt1's private one: the magic link skips the 0700
# parent, which a path walk as xmemt2 cannot pass.
mkdir -m 0700 "$T/victim" && mkdir -m 0755 "$T/victim/project"
printf '#!/bin/bash\npython3 train.py --token=VICTIMSECRET\n' >"$T/victim/project/job.sbatch"
echo 'print(1)' >"$T/victim/project/train.py" && chown -R xmemt1 "$T/victim"
runuser -u xmemt1 -- sh -c "cd '$T/victim/project' && exec sleep 60" &
for _ in $(seq 50); do vpid=$(pgrep -u xmemt1 -x sleep -n); [ -n "$vpid" ] && [ "$(readlink "/proc/$vpid/cwd")" = "$T/victim/project" ] && break; sleep 0.1; done
expect_true "the victim's process did not start" [ -n "$vpid" ]
for cwd in "$T/w2" "/proc/$vpid/cwd"; do
    mkdir -p "$T/w2" && chmod 0777 "$T/w2"
    runuser -u xmemt2 -- env RAW_CWD="$cwd" RAW_SCRIPT="/proc/$vpid/cwd/job.sbatch" \
        python3 "$T/bin/rawclient.py" "$SOCK" foreign-script >"$T/m1"
    expect_true "M1 through $cwd: $(cat "$T/m1")" \
        grep -q '"outcome_name": "\(script_unreadable\|cwd_unusable\)"' "$T/m1"
    expect_false "the reply quoted the victim's script: $(cat "$T/m1")" grep -q VICTIMSECRET "$T/m1"
done
kill "$vpid" 2>/dev/null

log "job_end only from the node (root)"
id1=$(kv "$T/a" id)
run_to "$T/h" runuser -u xmemt2 -- "$L" job-end "$SOCK" "$id1" 1 0 5 0
expect_true "xmemt2 reported xmemt1's job" [ "$RUN_RC" != 0 ]
expect_true "job_end message: $(cat "$T/h")" grep -q "only the node reports a job's end" "$T/h"
run_to /dev/null "$L" job-end "$SOCK" "$id1@$u1" 2 1 5 1
expect_rc 0 "root's job_end"
expect_eq "$(sql "SELECT count(*) FROM jobs WHERE request_id=$id1")" 1 "one job row"
stop_xmemd
finish
