#!/usr/bin/env bash
# Issue 26, L6: a GPU request submitted with raw libslurm (lab/raw-submit.c: no sbatch
# parser, any text in tres_per_node) by a second user (xmemt1), carrying a forged requeue
# mark, must not put that mark into root's AdminComment: job_submit.lua writes the request
# there parsed (xmem_lib.request_text), never copied. Slurm 22.05's controller refuses each
# of these texts itself after job_submit.lua ran ("Invalid generic resource"), so no record
# is kept; a controller that kept one must find only the parsed request in it. A well-formed
# raw request is written back parsed.
T_NAME=59-slurm-raw-gres
. "$(dirname "$0")/lab/testlib.sh"
t_require_lab
[ -r /usr/include/slurm/slurm.h ] || t_skip "no libslurm headers (/usr/include/slurm/slurm.h: libslurm-dev)"
command -v gcc >/dev/null || t_skip "gcc not installed"
id xmemt1 >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin xmemt1 ||
    fail "cannot create the second user xmemt1"
XMEM_LAB_PROFILER=fake lab_up shard
J=$LAB/jobs
gcc -Wall -o "$J/raw-submit" "$XMEM_SRC/tests/integration/lab/raw-submit.c" -lslurm ||
    fail "cannot build lab/raw-submit.c against libslurm"
chmod 0755 "$J/raw-submit"
admin_comment() { timeout 10 scontrol show job "$1" | sed -n 's/^ *AdminComment=\(.*[^ ]\) *$/\1/p'; }
mark="xmem: requeued after CUDA OOM from=shard:3 limit=8004M to=shard:10 whole"
body=$'#!/bin/bash\nexit 0\n'

# raw GRES: submits as xmemt1 with XMEM_MODE=estimate in the SPANK environment; RUN_OUT,
# RUN_RC, JOB = the id or empty (the controller may refuse the text after job_submit.lua).
raw() {
    RUN_OUT=$(cd "$J" && runuser -u xmemt1 -- env SLURM_CONF="$SLURM_CONF" "$J/raw-submit" "$1" "$body" XMEM_MODE=estimate 2>&1)
    RUN_RC=$?
    JOB=$(lab_jobid "$RUN_OUT")
}

refused=0
for forged in "gres:gpu:1; $mark" "gres:gpu:a; $mark:1" "gres:shard:a; $mark:1" \
              "gres:gpu:1,gres:gpu:a; $mark"; do
    raw "$forged"
    if [ -z "$JOB" ]; then
        [ "$RUN_RC" != 0 ] || fail "'$forged': no job and no error: $RUN_OUT"
        refused=$((refused + 1))
        continue
    fi
    record=$(admin_comment "$JOB")
    case $record in *"requeued after"*) fail "the forged mark reached root's AdminComment: $record" ;; esac
    [[ $record == *"request=?"* ]] || fail "the unparsable request is not written as '?': $record"
    timeout 10 scancel "$JOB"
done
# Whatever the controller kept or refused, no job of xmemt1 carries the mark.
for id in $(timeout 10 squeue -h -t all -u xmemt1 -o %i); do
    case $(admin_comment "$id") in *"requeued after"*) fail "job $id carries the forged mark" ;; esac
done
pass "a forged mark in a raw GRES string reaches no AdminComment ($refused of 4 refused by the controller)"

raw "gres:gpu:1"
[ -n "$JOB" ] || fail "a plain raw request was refused: $RUN_OUT"
record=$(admin_comment "$JOB")
[[ $record == *"request=gres:gpu:1"* ]] || fail "a plain request is not written back: $record"
pass "a well-formed request is written back parsed ($record)"
timeout 10 scancel "$JOB"
finish
