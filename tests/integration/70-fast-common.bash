# Shared by the fast-mode tests 70-74 (sourced; not a test itself: run-all.sh runs *.sh).
# Builds on the capture tests' helpers (run, capture, summary, expect).
source "$(dirname "${BASH_SOURCE[0]}")/20-capture-common.bash"
FAST=$XMEM_BUILD/bin/xmem-profile-fast
ESTIMATE=$XMEM_BUILD/bin/xmem-estimate
[ -x "$FAST" ] || { echo "xmem-profile-fast not built"; exit 77; }

# fast_capture TRACE ARGS...: xmem-profile-fast into TRACE (must succeed).
fast_capture() {
    local trace=$1
    shift
    run "$FAST" --out "$trace" --timeout 300 "$@"
}

# estimate_field TRACE KEY [ARGS...]: a top-level number of xmem-estimate's JSON for TRACE
# (H100-80GB; the trace's own torch unless ARGS say --torch).
estimate_field() {
    local trace=$1 key=$2
    shift 2
    "$ESTIMATE" ${XMEM_CATALOG:+--catalog "$XMEM_CATALOG"} --json --gpu H100-80GB "$@" --trace-in "$trace" >"$TMP/estimate.json" 2>"$TMP/estimate.err" || {
        echo "FAILED: xmem-estimate on $trace" >&2; cat "$TMP/estimate.err" >&2; exit 1; }
    $PY -c "import json; print(json.load(open('$TMP/estimate.json'))['$key'])"
}

# agree WHAT EXACT FAST TOLERANCE: fails unless FAST is within TOLERANCE (fraction) of EXACT.
agree() {
    local what=$1 exact=$2 fast=$3 tol=$4
    if $PY -c "import sys; e, f = $exact, $fast; sys.exit(0 if abs(f - e) <= $tol * e else 1)"; then
        echo "ok: $what: exact $exact, fast $fast"
    else
        echo "FAILED: $what: exact $exact, fast $fast (more than $tol apart)"
        exit 1
    fi
}
