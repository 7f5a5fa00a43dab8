#!/usr/bin/env bash
# Failures are one clear line: a script that never steps times out, a crashing script shows
# its stderr tail, bad options name the fix; no trace is left behind.
source "$(dirname "$0")/20-capture-common.bash"

# expect_fail EXIT PATTERN COMMAND...: COMMAND exits EXIT and its stderr matches PATTERN.
expect_fail() {
    local want=$1 pattern=$2 rc=0
    shift 2
    echo "+ $*"
    "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
    cat "$TMP/err"
    expect_true "exit $rc, expected $want" [ "$rc" -eq "$want" ]
    expect_true "stderr does not match: $pattern" grep -Eq "$pattern" "$TMP/err"
}

start=$(date +%s)
expect_fail 1 '^xmem: never_steps.py: no optimizer step within the profile.s budget of 5 s \(if it sets up, evaluates or loads data for long before training, raise --budget' \
    "$PROFILE" --out "$TMP/never.trace" --budget 5 -- python3 "$WORKLOADS/never_steps.py"
took=$(( $(date +%s) - start ))
expect_true "the 5 s budget took $took s" [ "$took" -lt 30 ]
expect_true "a trace was left after the timeout" [ ! -e "$TMP/never.trace" ]
expect_true "no stderr tail after the timeout" grep -q '  | evaluating before training' "$TMP/err"

# Slow set-up before the first step is bounded by the budget, not the per-step timeout.
run "$PROFILE" --out "$TMP/slow.trace" --timeout 2 -- python3 "$WORKLOADS/slow_setup.py"
expect_rc 0 "4 s of set-up was cut by the 2 s step timeout"
expect_true "no trace after slow set-up" [ -s "$TMP/slow.trace" ]

# Steps that each take longer than --timeout, on a machine where the first did too: the wait
# for a step follows the first step's time (docs/capture.md, "Timeouts").
run "$PROFILE" --out "$TMP/slow_steps.trace" --timeout 1 -- python3 "$WORKLOADS/slow_steps.py"
expect_rc 0 "steps as slow as the first were cut by the 1 s step timeout"
expect_true "no trace of the slow steps" [ -s "$TMP/slow_steps.trace" ]

expect_fail 1 'ValueError: shape mismatch in my_custom_head' \
    "$PROFILE" --out "$TMP/crash.trace" -- "$WORKLOADS/crashes.py"
expect_true "summary line" grep -q '^xmem: crashes.py: exited with status 1 after 2 optimizer steps' "$TMP/err"
expect_true "a trace was left after the crash" [ ! -e "$TMP/crash.trace" ]
expect_eq "$(ls "$TMP" | grep spool)" "" "spool file left behind"

# A job that meets a limit its caller set says so through the capture's status line, never
# its stderr (docs/profile-status.md): MemoryError exits 6, EAGAIN from fork exits 7, after
# the same summary line and traceback as any other failure.
for limit in "6 MemoryError: out of the sandbox's address space" \
             "7 BlockingIOError: [Errno 11] Resource temporarily unavailable"; do
    cat >"$TMP/limit.py" <<PY
import errno, torch
m = torch.nn.Linear(4, 4).cuda()
o = torch.optim.Adam(m.parameters())
m(torch.randn(2, 4, device="cuda")).sum().backward()
o.step()
if ${limit%% *} == 6:
    raise MemoryError("out of the sandbox's address space")
raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
PY
    expect_fail "${limit%% *}" '^xmem: limit.py: exited with status 1 after 1 optimizer steps' \
        "$PROFILE" --out "$TMP/limit.trace" -- python3 "$TMP/limit.py"
    expect_true "no traceback for ${limit#* }" grep -qF "${limit#* }" "$TMP/err"
done

expect_fail 2 '^xmem: --steps: invalid value: zero' "$PROFILE" --out "$TMP/x" --steps zero -- python3 x.py
expect_fail 2 '^xmem: --out TRACE is required' "$PROFILE" -- python3 x.py
expect_fail 1 "^xmem: $TMP/nodir/t.trace.spool: No such file or directory" \
    "$PROFILE" --out "$TMP/nodir/t.trace" -- python3 "$WORKLOADS/crashes.py"
expect_fail 1 '^xmem: /nonexistent/python: No such file or directory' \
    "$PROFILE" --out "$TMP/x" --python /nonexistent/python -- python3 "$WORKLOADS/crashes.py"
echo 'print("no training here")' >"$TMP/nostep.py"
expect_fail 1 '^xmem: nostep.py: exited without an optimizer step' "$PROFILE" --out "$TMP/x" -- python3 "$TMP/nostep.py"

# A script that ends by itself after 2 of 3 steps still leaves a valid, shorter trace.
cat >"$TMP/short.py" <<'PY'
import torch
m = torch.nn.Linear(4, 4).cuda()
o = torch.optim.Adam(m.parameters())
for _ in range(2):
    o.zero_grad()
    m(torch.randn(2, 4, device="cuda")).sum().backward()
    o.step()
PY
rc=0; "$PROFILE" --out "$TMP/short.trace" -- python3 "$TMP/short.py" 2>"$TMP/err" || rc=$?
cat "$TMP/err"
expect_eq "$rc" 0 "short script: exit status"
expect_true "short script not reported as a 2-step capture" \
    grep -q '^xmem: short.py: the script ended after 2 of 3 optimizer steps' "$TMP/err"
run_ok $CHECK "$TMP/short.trace" --steps 2 --phases-in-order >/dev/null

# Progress (issue 17 class 10): with -v (or a terminal) finished steps are shown as they come
# (two steps that finish within one poll of the status pipe share a line).
run_to /dev/null "$PROFILE" -v --out "$TMP/progress.trace" -- python3 "$TMP/short.py"
expect_rc 0 "short script under -v"
expect_out '^xmem: short.py: step [12] of 3 after [0-9]+\.[0-9] s$' "no progress line"
echo "ok: failures are clear"
