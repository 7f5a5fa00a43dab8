# testlib.sh — shared by the Slurm tests (TESTS, area slurm): one lab per script, and the lab
# always taken down (trap). The assertions are lib/assert.bash's (run, expect_rc, expect_out,
# expect_field of a job, fail with the daemons' log tails). Source it, then call lab_up.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lab.sh"

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
    [ -f "$LAB_PLUGIN" ] || t_skip "no $LAB_PLUGIN (build first)"
    # sbatch and slurmstepd are not ASan programs: an ASan-built plugin cannot load in them.
    if nm -D "$LAB_PLUGIN" 2>/dev/null | grep -q ' U __asan_'; then
        t_skip "xmem.so is built with AddressSanitizer (SANITIZE=1); Slurm's commands cannot load it"
    fi
}

# field_of JOB FIELD: expect_field JOB FIELD VALUE WHAT checks a Slurm job's field here.
field_of() { lab_field "$@"; }

# job_script FILE LIMIT_MB BODY [PRELUDE]: a one-GPU batch script every test user can read:
# PRELUDE (an #XMEM directive, a first command), the fake profiler's train.py sized by
# LIMIT_MB (lab/fake-profiler.sh), then BODY.
job_script() {
    {
        printf '#!/bin/bash\n#SBATCH --gres=gpu:1\n'
        [ -z "${4:-}" ] || printf '%s\n' "$4"
        printf 'python3 train.py --fake-limit-mb=%s\n%s\n' "$2" "$3"
    } >"$1"
    chmod 0644 "$1"
}

# gpu_of JOB: the GPU (GRES with its index) a running job was given.
gpu_of() { timeout 10 scontrol show job -d "$1" | sed -n 's/.* GRES=\([^ ]*(IDX:[0-9,-]*)\).*/\1/p' | head -n 1; }

# The form a job that keeps one whole untyped GPU is queued in where the lab packs: every
# share of one GPU (job_submit.lua; docs/enforcement.md, "Whole GPUs in a partition that packs").
lab_whole_gres() { if [ "$LAB_KIND" = mps ]; then echo "gres:mps:$LAB_MPS_PER_GPU"; else echo "gres:shard:$LAB_SHARDS_PER_GPU"; fi; }

# The job's comment (may contain spaces).
lab_comment() { timeout 10 squeue -h -t all -j "$1" -o %k 2>/dev/null || true; }

# limits_in TEXT: every number TEXT calls a limit ("limit N MiB", "limit N.N GiB", "limit=NM"),
# in MiB, one per line, each once.
limits_in() {
    grep -oE 'limit[ =][0-9.]+ ?(MiB|GiB|M|G)\b' <<<"$1" | sed -E 's/^limit[ =]//' |
        awk '{ n = $0; sub(/ ?[MG](iB)?$/, "", n); printf "%g\n", ($0 ~ /G/) ? n * 1024 : n }' | sort -u
}

# expect_one_limit WHAT TEXT: what one job's user reads (sbatch's lines, its record) calls one
# number a limit, the one it is held to; the share size has a name of its own (issue 35).
expect_one_limit() {
    local limits
    limits=$(limits_in "$2")
    expect_eq "$(grep -c . <<<"$limits")" 1 "$1: numbers called limit: $(echo $limits) in: $2"
}

# t_require_report_lab: t_require_lab, xmem-report (REPORT), xmemd and the sqlite3 CLI.
t_require_report_lab() {
    t_require_lab
    REPORT=$XMEM_BUILD/bin/xmem-report
    [ -x "$REPORT" ] || t_skip "no $REPORT (the report is not built)"
    [ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"
    command -v sqlite3 >/dev/null || t_skip "no sqlite3 CLI (make deps)"
}

# t_report_lab: after lab_up, for the tests that read the ledger: DB (the ledger), J (the
# jobs' directory) and $J/shared, which every user may write, with the fake profiler's
# train.py; the working directory is $J/shared.
t_report_lab() {
    expect_true "xmemd did not start" [ "$LAB_XMEMD" = 1 ]
    DB=$LAB/state/xmem-ledger.sqlite
    J=$LAB/jobs
    mkdir -p "$J/shared" && chmod 0777 "$J/shared" && chmod o+x "$LAB" "$J"
    cd "$J/shared" || fail "no $J/shared"
    echo 'print("training")' >train.py
    chmod 0644 train.py
}

# submit ARGS...: sbatch with the args; JOB = the id (fails the test if none).
submit() {
    run sbatch "$@"
    JOB=$(lab_jobid "$RUN_OUT")
    [ -n "$JOB" ] || fail "sbatch $* submitted nothing"
}

# lab_forge_client: the hostile client configuration in $LAB/evil: the same cluster, only
# the forging plugin (forge-spank.c), no cli_filter. Needs gcc.
lab_forge_client() {
    mkdir -p "$LAB/evil"
    gcc -shared -fPIC -Wall -o "$LAB/evil/forge.so" "$XMEM_SRC/tests/integration/lab/forge-spank.c" ||
        fail "cannot build forge-spank.c"
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
    [ -n "$JOB" ] || fail "forged submission was not queued (never lose a job)"
}

# t_require_preamble_lab: what the preamble tests (55, 56) need beyond a lab: xmemd, the
# second user xmemt1 they submit as, and the preamble's shell.
t_require_preamble_lab() {
    t_require_lab
    [ -x "$LAB_XMEMD_BIN" ] || t_skip "no $LAB_XMEMD_BIN (the daemon is not built)"
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
    [ -n "$JOB" ] || fail "$* submitted nothing (never lose a job)"
}

# t_profile_jobs_lab: the lab as a cluster (lab/cluster.sh) whose xmemd runs exact profiles,
# by the real estimator, as jobs in partition cpu (docs/profile-jobs.md), and the second
# user xmemt1 who submits; skips what this machine lacks.
t_profile_jobs_lab() {
    t_require_lab
    [ -x "$LAB_XMEMD_BIN" ] || t_skip "no $LAB_XMEMD_BIN (the daemon is not built)"
    command -v ip >/dev/null && command -v nsenter >/dev/null ||
        t_skip "no ip or nsenter (make deps: iproute2)"
    lab_prefer_torch_python
    lab_real_profiler_ok || t_skip "the real xmem-estimate is not usable here (no capture library or torch)"
    id xmemt1 >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin xmemt1 ||
        t_skip "cannot create the test user xmemt1"
    XMEM_LAB_CLUSTER=1 XMEM_LAB_PROFILER=real XMEM_LAB_ESTIMATOR_ARGS="--mode, exact" \
        XMEM_LAB_YAML="profile_partition: cpu" XMEM_LAB_TIMEOUT=600 lab_up shard
}

# t_tiny_train FILE [PRELUDE]: a tiny torch training script, a Linear layer of --width N
# (default 64) trained three SGD steps, after PRELUDE's Python lines.
t_tiny_train() {
    {
        echo 'import os, resource, sys, time, torch'
        echo 'width = int(sys.argv[sys.argv.index("--width") + 1]) if "--width" in sys.argv else 64'
        printf '%s\n' "${2:-}"
        cat <<'PY'
model = torch.nn.Linear(width, width)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    model(torch.randn(8, width)).sum().backward()
    opt.step()
    opt.zero_grad()
PY
    } >"$1"
}
