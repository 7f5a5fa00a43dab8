# testlib.sh — shared by tests/integration/5x-*.sh: one lab per script, commands logged with
# their exit status, assertions that print both values, the daemon logs on failure, and the
# lab always taken down (trap). Source it, then call lab_up.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lab.sh"

T_PASS=0
T_NAME=${T_NAME:-$(basename "$0" .sh)}

t_exit() {
    local rc=$?
    lab_down
    exit $rc
}
trap t_exit EXIT
trap 'exit 130' INT TERM

t_skip() {
    echo "$*"
    exit 77
}

# Skips unless this machine can run a lab (root, Slurm, munge, the plugin built).
t_require_lab() {
    [ "$(id -u)" = 0 ] || t_skip "needs root to run munged/slurmd"
    command -v slurmctld >/dev/null && command -v munged >/dev/null ||
        t_skip "Slurm or MUNGE not installed (make deps)"
    [ -f "$XMEM_BUILD/lib/xmem.so" ] || t_skip "no $XMEM_BUILD/lib/xmem.so (build first)"
    # sbatch and slurmstepd are not ASan programs: an ASan-built plugin cannot load in them.
    if nm -D "$XMEM_BUILD/lib/xmem.so" 2>/dev/null | grep -q ' U __asan_'; then
        t_skip "xmem.so is built with AddressSanitizer (SANITIZE=1); Slurm's commands cannot load it"
    fi
}

t_fail() {
    echo "FAIL [$T_NAME]: $*" >&2
    [ -n "${RUN_OUT:-}" ] && { echo "---- last command output:" >&2; echo "$RUN_OUT" >&2; }
    lab_dump
    exit 1
}

t_ok() {
    T_PASS=$((T_PASS + 1))
    echo "ok $T_PASS - $*"
}

# run CMD...: runs with a timeout; RUN_OUT = stdout+stderr, RUN_RC = exit status.
run() {
    RUN_OUT=$(timeout 120 "$@" 2>&1)
    RUN_RC=$?
    echo "\$ $* -> $RUN_RC" >&2
}

expect_rc() { [ "$RUN_RC" = "$1" ] || t_fail "$2: exit status $RUN_RC, expected $1"; }
expect_out() { grep -qE -- "$1" <<<"$RUN_OUT" || t_fail "$2: output lacks /$1/"; }
expect_no_out() { ! grep -qE -- "$1" <<<"$RUN_OUT" || t_fail "$2: output has /$1/"; }

# expect_field JOB FIELD VALUE WHAT
expect_field() {
    local got
    got=$(lab_field "$1" "$2")
    [ "$got" = "$3" ] || t_fail "$4: job $1 $2='$got', expected '$3'"
}

# The job's comment (may contain spaces).
lab_comment() { timeout 10 squeue -h -t all -j "$1" -o %k 2>/dev/null || true; }

# submit ARGS...: sbatch with the args; JOB = the id (fails the test if none).
submit() {
    run sbatch "$@"
    JOB=$(lab_jobid "$RUN_OUT")
    [ -n "$JOB" ] || t_fail "sbatch $* submitted nothing"
}

# lab_forge_client: the hostile client configuration in $LAB/evil: the same cluster, only
# the forging plugin (forge-spank.c), no cli_filter. Needs gcc.
lab_forge_client() {
    mkdir -p "$LAB/evil"
    gcc -shared -fPIC -Wall -o "$LAB/evil/forge.so" "$XMEM_SRC/tests/integration/lab/forge-spank.c" ||
        t_fail "cannot build forge-spank.c"
    echo "required $LAB/evil/forge.so" >"$LAB/evil/plugstack.conf"
    sed -e "s|^PlugStackConfig=.*|PlugStackConfig=$LAB/evil/plugstack.conf|" -e '/^CliFilterPlugins/d' \
        "$LAB/etc/slurm.conf" >"$LAB/evil/slurm.conf"
    chmod -R a+rX "$LAB/evil"
}

# cred AS_USER PAYLOAD: a MUNGE credential made by AS_USER (root is xmemd's uid in the lab).
cred() { runuser -u "$1" -- munge -S "$LAB/munge/munge.socket" -s "$2"; }

# forged_sbatch AS_USER CREDENTIAL SBATCH_ARGS...: a held job, from $LAB/jobs, through the
# forging client, carrying the credential as its decision; JOB = the id.
forged_sbatch() {
    local user=$1 credential=$2
    shift 2
    RUN_OUT=$(cd "$LAB/jobs" && runuser -u "$user" -- env SLURM_CONF="$LAB/evil/slurm.conf" \
        FORGE_XMEM_MODE=auto FORGE_XMEM_LIMIT_MB=4096 FORGE_XMEM_ORIGIN=sbatch \
        FORGE_XMEM_DECISION="$credential" timeout 60 sbatch --hold -o /dev/null "$@" 2>&1)
    RUN_RC=$?
    JOB=$(lab_jobid "$RUN_OUT")
    [ -n "$JOB" ] || t_fail "forged submission was not queued (never lose a job)"
}

# t_require_preamble_lab: what the preamble tests (55, 56) need beyond a lab: xmemd, the
# second user xmemt1 they submit as, and the preamble's shell.
t_require_preamble_lab() {
    t_require_lab
    [ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"
    id xmemt1 >/dev/null 2>&1 || t_skip "no second user xmemt1 (the daemon tests' user)"
    [ -x /bin/bash ] || t_skip "no /bin/bash (the preamble's shell)"
}

# submit_as USER [VAR=value...] COMMAND...: runs COMMAND (sbatch ...) as USER from
# $LAB/jobs, with a plain PATH, the lab's SLURM_CONF and the given variables; JOB = the id
# (fails the test if none: a job is never lost).
submit_as() {
    local user=$1
    shift
    RUN_OUT=$(cd "$LAB/jobs" && runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" \
        PATH=/usr/bin:/bin "$@" 2>&1)
    RUN_RC=$?
    echo "\$ $* -> $RUN_RC" >&2
    JOB=$(lab_jobid "$RUN_OUT")
    [ -n "$JOB" ] || t_fail "$* submitted nothing (never lose a job)"
}

t_done() {
    echo "$T_NAME: $T_PASS checks passed"
}
