#!/usr/bin/env bash
# Profiles that loop forever, burn CPU, allocate without bound, fork repeatedly, write
# gigabytes or flood stdout: each is stopped by its own limit with its own outcome, its
# whole process group is gone afterwards, and the daemon keeps serving.
. "$(dirname "$0")/40-daemon.d/lib.sh"
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
start_munged
ensure_user xmemt1
mkdir -m 0755 "$T/w" && chown xmemt1 "$T/w"
# The profiler runs the entrypoint it is given (like xmem-estimate does): argv after "--".
cat >"$T/prof.sh" <<'PROF'
#!/bin/sh
while [ "$1" != "--" ]; do shift; done; shift
"$@" || exit $?
echo '{"peak_bytes": 1, "limit_bytes": 2, "fits": true, "gpu": "A100-40GB", "torch": "2.1",
 "mode": "fast", "profile_seconds": 0, "analyze_seconds": 0, "breakdown": {}}'
PROF
chmod 0755 "$T/prof.sh"
write_config "limits: {wall_seconds: 8, cpu_seconds: 60, address_space_mb: 1024, processes: 40, file_size_mb: 8, output_kb: 64, nice: 5}" \
             "max_concurrent: 6" "max_per_user: 6"
start_xmemd

# expect_outcome NAME EXPECTED_OUTCOME COMMAND...: the test user's estimate of COMMAND, its
# reply (stdout and stderr) in $T/NAME, is answered EXPECTED_OUTCOME within 25 s.
expect_outcome() {
    local name=$1 want=$2
    shift 2
    local t0=$(date +%s)
    run runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" --deadline 60000 -- "$@"
    printf '%s\n' "$RUN_OUT" >"$T/$name"
    expect_eq "$(kv "$T/$name" name)" "$want" "$name outcome ($(kv "$T/$name" message))"
    expect_true "$name took too long" [ $(( $(date +%s) - t0 )) -le 25 ]
    expect_true "xmemd died during $name" kill -0 "$XMEMD_PID"
}

log "wall time: a sleeping profile and its children are killed"
expect_outcome wall profile_timeout /bin/sh -c 'sleep 300 & sleep 300'
log "wall time: a child that left the process group with setsid() is killed too"
expect_outcome escape profile_timeout python3 -c 'import os, signal, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        time.sleep(300)
    os._exit(0)
time.sleep(300)'
log "an escaped child of a profile that exits is killed when the profile ends"
expect_outcome escape_exit profile_bad_output python3 -c 'import os, signal, time
if os.fork() == 0:
    os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    time.sleep(300)
    os._exit(0)
print("done")'
sleep 0.3
expect_eq "$(ps -o pid= -u xmemt1 | wc -l)" 0 "processes left after the setsid escapes"
log "issue 26 M2: a descendant traced from outside the sandbox does not pin the slot"
# The profile's child lets any process trace it; the user's tracer, outside the sandbox,
# seizes it and never waits for it, so once killed it stays an unreaped zombie for the
# tracer's life (60 s). The keeper's reaping and xmemd's wait for the keeper are bounded.
# In the profile's PID namespace its pids are not the host's: the child names itself
# (PR_SET_NAME) and the tracer finds it by that name.
cat >"$T/tracer.py" <<'PY'
import ctypes, os, sys, time
ready, done, name = sys.argv[1], sys.argv[2], sys.argv[3]
open(done + ".tracer", "w").write(str(os.getpid()))
while not os.path.exists(ready):
    time.sleep(0.05)
def comm(p):
    try:
        return open(f"/proc/{p}/comm").read().strip()
    except OSError:
        return None
pid = next(int(p) for p in os.listdir("/proc") if p.isdigit() and comm(p) == name)
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, pid, None, None) != 0:  # PTRACE_SEIZE
    sys.exit("seize failed: " + os.strerror(ctypes.get_errno()))
open(done, "w").write(str(pid))
time.sleep(60)
PY
traced_name=traced-$$
rm -f "$T/w/traced.ready" "$T/w/seized" "$T/w/seized.tracer"
runuser -u xmemt1 -- python3 "$T/tracer.py" "$T/w/traced.ready" "$T/w/seized" "$traced_name" 2>"$T/tracer.err" &
tracer=$!
expect_outcome traced estimated python3 -c 'import ctypes, os, time
if os.fork() == 0:
    libc = ctypes.CDLL(None)
    libc.prctl(0x59616d61, ctypes.c_ulong(-1 & 0xffffffffffffffff), 0, 0, 0)  # PR_SET_PTRACER_ANY
    libc.prctl(15, b"'"$traced_name"'", 0, 0, 0)  # PR_SET_NAME
    open("traced.ready", "w").close()
    time.sleep(300)
    os._exit(0)
for _ in range(200):
    if os.path.exists("seized"):
        break
    time.sleep(0.05)
pass'
expect_true "the tracer did not seize the profile's child: $(cat "$T/tracer.err")" [ -s "$T/w/seized" ]
traced=$(cat "$T/w/seized")
# The tracer still alive, the traced child is dead: a zombie only its tracer can release.
expect_eq "$(awk '{print $3}' "/proc/$traced/stat" 2>/dev/null || echo gone)" Z "the traced child's state after the profile"
kill "$(cat "$T/w/seized.tracer")"; wait "$tracer" 2>/dev/null
# The tracer gone, init reaps the zombie it held.
for _ in $(seq 50); do [ "$(ps -o pid= -u xmemt1 | wc -l)" = 0 ] && break; sleep 0.1; done
log "address space"
# Mappings are never touched, so this costs no CPU even on a loaded machine.
expect_outcome mem profile_memory_limit python3 -c 'import mmap
maps = []
while True: maps.append(mmap.mmap(-1, 64 << 20))'
log "processes: a fork loop"
expect_outcome fork profile_process_limit python3 -c 'import os, time
while True:
    if os.fork() == 0:
        time.sleep(300)
        os._exit(0)'
log "file size: writing gigabytes"
expect_outcome fsize profile_file_limit /bin/sh -c 'head -c 4G /dev/zero > big.out'
expect_true "the profile's file is not owned by the user" [ "$(stat -c %U "$T/w/big.out")" = xmemt1 ]
expect_true "file grew past the limit" [ "$(stat -c %s "$T/w/big.out")" -le $((8 << 20)) ]
log "stdout flood"
expect_outcome flood profile_output_too_large /bin/sh -c 'yes xxxxxxxxxxxxxxxxxxxxxxxxxxxx'
log "failure shows the stderr tail"
expect_outcome crash profile_failed /bin/sh -c 'echo "Traceback: boom in train.py" >&2; exit 3'
expect_true "stderr tail missing: $(cat "$T/crash")" grep -q \
    "message=xmem: the estimator failed with exit status 3 | stderr: Traceback: boom in train.py" "$T/crash"
log "stdout that is not the JSON result"
expect_outcome badout profile_bad_output /bin/echo "not the JSON the daemon expects"

sleep 0.5
left=$(ps -o pid= -u xmemt1 | wc -l)
expect_eq "$left" 0 "processes of the test user left after the limits"
expect_eq "$(sql "SELECT count(*) FROM requests WHERE outcome_name='profile_timeout'")" 2 "ledger rows for profile_timeout"
for o in profile_memory_limit profile_process_limit profile_file_limit profile_output_too_large profile_failed profile_bad_output; do
    want=1
    [ "$o" = profile_bad_output ] && want=2
    expect_eq "$(sql "SELECT count(*) FROM requests WHERE outcome_name='$o'")" "$want" "ledger row for $o"
done
log "address space and processes, said by the estimator's exit status with nothing on stderr"
# (xmem-estimate exits 6 or 7 when the capture saw MemoryError or EAGAIN: docs/profile-status.md)
expect_outcome memexit profile_memory_limit /bin/sh -c 'exit 6'
expect_outcome forkexit profile_process_limit /bin/sh -c 'exit 7'
"$L" estimate "$SOCK" --cwd "$T/w" -- /bin/true >/dev/null 2>&1 # root: refused, but answered
expect_eq "$(status_field counters root_refused)" 1 "daemon still answering"
stop_xmemd

log "CPU time (own limits: under load a busy loop gets little CPU per wall second)"
write_config "limits: {wall_seconds: 60, cpu_seconds: 1}"
start_xmemd
expect_outcome cpu profile_cpu_limit /bin/sh -c 'while :; do :; done'
stop_xmemd

log "a missing profiler is spawn_failed"
write_config "estimator: [$T/missing-profiler]"
start_xmemd
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- /bin/true >"$T/spawn"
expect_eq "$(kv "$T/spawn" name)" spawn_failed "missing profiler"
expect_true "spawn message: $(cat "$T/spawn")" \
    grep -q "cannot execute $T/missing-profiler: No such file or directory" "$T/spawn"
stop_xmemd
finish
