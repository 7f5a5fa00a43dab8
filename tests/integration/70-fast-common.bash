# Shared by the fast-mode tests (TESTS, area fast; sourced, not a test itself). Builds on
# the capture tests' helpers (capture, summary, expect_trace) and lib/assert.bash (agree).
source "$(dirname "${BASH_SOURCE[0]}")/20-capture-common.bash"
FAST=$XMEM_BUILD/bin/xmem-profile-fast
ESTIMATE=$XMEM_BUILD/bin/xmem-estimate
[ -x "$FAST" ] || { echo "xmem-profile-fast not built"; exit 77; }

# fast_capture TRACE ARGS...: xmem-profile-fast into TRACE (must succeed).
fast_capture() {
    local trace=$1
    shift
    run_ok "$FAST" --out "$trace" --timeout 300 "$@"
}

# estimate_field TRACE KEY [ARGS...]: a top-level number of xmem-estimate's JSON for TRACE
# (H100-80GB; the trace's own torch unless ARGS say --torch).
estimate_field() {
    local trace=$1 key=$2
    shift 2
    "$ESTIMATE" ${XMEM_CATALOG:+--catalog "$XMEM_CATALOG"} --json --gpu H100-80GB "$@" --trace-in "$trace" >"$TMP/estimate.json" 2>"$TMP/estimate.err" ||
        fail "xmem-estimate on $trace: $(cat "$TMP/estimate.err")"
    $PY -c "import json; print(json.load(open('$TMP/estimate.json'))['$key'])"
}
