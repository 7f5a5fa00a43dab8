# Shared by the capture tests (TESTS, area capture; sourced, not a test itself), built on
# lib/assert.bash. Needs XMEM_BUILD and XMEM_SRC; skips (77) when the capture pieces or
# torch are missing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/assert.bash"
: "${XMEM_BUILD:?}" "${XMEM_SRC:?}"
PY=/usr/bin/python3
# These tests capture with Debian's torch 1.13: `python3` in a job resolves on its PATH
# (docs/capture.md, "Which interpreter"), so /usr/bin comes first, as in a job run there.
export PATH="/usr/bin:$PATH"
PROFILE=$XMEM_BUILD/bin/xmem-profile
WORKLOADS=$XMEM_SRC/tests/workloads
CHECK="$PY $WORKLOADS/check_trace.py"
[ -x "$PROFILE" ] || { echo "xmem-profile not built"; exit 77; }
[ -f "$XMEM_BUILD/lib/libxmem-capture.so" ] || { echo "capture library not built (no LibTorch)"; exit 77; }
$PY -c 'import torch' 2>/dev/null || { echo "$PY has no torch"; exit 77; }
TMP=$(mktemp -d /tmp/xmem-capture-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# A capture takes minutes on a busy machine: run and run_to wait as long as run-all.sh does.
RUN_TIMEOUT=${RUN_TIMEOUT:-900}
# The tests keep a command's stdout and stderr there: a failure shows their tails.
log_watch "$TMP/out" "$TMP/err"

# capture TRACE ARGS...: xmem-profile into TRACE, then validate it for --steps (default 3).
capture() {
    local trace=$1
    shift
    run_ok "$PROFILE" --out "$trace" --timeout 300 "$@"
}

# summary TRACE EXPR: evaluates a Python expression over the checker's JSON summary `s`.
summary() {
    $CHECK "$1" >"$TMP/summary.json"
    $PY -c "import json,sys; s=json.load(open('$TMP/summary.json')); print($2)"
}

# expect_trace TRACE PYTHON-EXPR WHAT: the expression holds over the checker's summary of TRACE.
expect_trace() {
    expect_true "$3 ($2)" [ "$(summary "$1" "bool($2)")" = True ] && echo "ok: $3"
}
