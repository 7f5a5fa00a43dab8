# Shared by the capture tests 20-29 (sourced; not a test itself: run-all.sh runs *.sh).
# Needs XMEM_BUILD and XMEM_SRC; skips (77) when the capture pieces or torch are missing.
set -euo pipefail
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

# Logs and runs a command; on failure prints its output and fails the test.
# Failure output goes to stderr so it shows even when the caller discards stdout.
run() {
    local rc=0
    echo "+ $*" >&2
    "$@" >"$TMP/out" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "FAILED (exit $rc): $*" >&2
        cat "$TMP/out" >&2
        exit 1
    fi
    cat "$TMP/out"
}

# capture TRACE ARGS...: xmem-profile into TRACE, then validate it for --steps (default 3).
capture() {
    local trace=$1
    shift
    run "$PROFILE" --out "$trace" --timeout 300 "$@"
}

# summary TRACE EXPR: evaluates a Python expression over the checker's JSON summary `s`.
summary() {
    $CHECK "$1" >"$TMP/summary.json"
    $PY -c "import json,sys; s=json.load(open('$TMP/summary.json')); print($2)"
}

# expect_true DESCRIPTION PYTHON-EXPR over the summary of TRACE
expect() {
    local trace=$1 what=$2 expr=$3 got
    got=$(summary "$trace" "bool($expr)")
    if [ "$got" != True ]; then
        echo "FAILED: $what ($expr)"
        exit 1
    fi
    echo "ok: $what"
}
