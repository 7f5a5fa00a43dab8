# Shared by the exact-capture torch 2.x tests (TESTS, area torch2; sourced, not a test
# itself), built on lib/assert.bash. They run the project venv's torch 2.x (XMEM_VENV, default $XMEM_SRC/.venv)
# under xmem-profile; the capture library for that torch is $XMEM_CAPTURE_LIB when set,
# else the one xmem-profile finds (docs/capture.md). Tests 20-34 keep covering torch 1.13.
set -euo pipefail
: "${XMEM_BUILD:?}" "${XMEM_SRC:?}"
. "$(dirname "${BASH_SOURCE[0]}")/lib/assert.bash"
VENV=${XMEM_VENV:-$XMEM_SRC/.venv}
VPY=$VENV/bin/python
PY=/usr/bin/python3
PROFILE=$XMEM_BUILD/bin/xmem-profile
ESTIMATE=$XMEM_BUILD/bin/xmem-estimate
[ -x "$PROFILE" ] && [ -x "$ESTIMATE" ] || { echo "xmem-profile/xmem-estimate not built"; exit 77; }
[ -x "$VPY" ] || { echo "no venv python at $VPY (set XMEM_VENV)"; exit 77; }
"$VPY" -c 'import sys, torch; sys.exit(0 if int(torch.__version__.split(".")[0]) >= 2 else 1)' 2>/dev/null ||
    { echo "$VPY has no torch 2.x"; exit 77; }
export XMEM_PYTHON=$VPY # what `python` in a job's command runs (xmem-estimate's profiler)
TMP=$(mktemp -d /tmp/xmem-capture2-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# The tests keep a command's output there: a failure shows its tail.
log_watch "$TMP/out" "$TMP/err"
# Without XMEM_CAPTURE_LIB, the library xmem-profile finds must load into the venv's torch.
if [ -z "${XMEM_CAPTURE_LIB:-}" ]; then
    "$PROFILE" --python "$VPY" --out "$TMP/probe.trace" --timeout 120 -- python -c \
        'import torch; torch.optim.SGD([torch.zeros(1, requires_grad=True)]).step()' \
        >"$TMP/probe.out" 2>&1 ||
        { echo "no capture library for the venv's torch ($(grep -m1 '^xmem:' "$TMP/probe.out")): set XMEM_CAPTURE_LIB"; exit 77; }
fi

# profile PROFILER PYTHON TRACE SCRIPT ARGS...: SCRIPT under PROFILER with PYTHON; the job's
# stdout is this function's; a failure prints the profiler's message and fails the test.
profile() {
    local profiler=$1 python=$2 trace=$3 rc=0
    shift 3
    echo "+ ${profiler##*/} --python $python --out $trace -- python $*" >&2
    "$profiler" --python "$python" --out "$trace" --timeout 300 -- python "$@" \
        2>"$TMP/profile.err" || rc=$?
    [ "$rc" -eq 0 ] || fail "${profiler##*/} exited $rc: $(cat "$TMP/profile.err")"
}

# capture TRACE SCRIPT ARGS...: the exact capture of SCRIPT with the venv's python.
capture() {
    local trace=$1
    shift
    profile "$PROFILE" "$VPY" "$trace" "$@"
}

# estimate JSON ARGS...: xmem-estimate --json (exact mode) into JSON; ARGS end with the job.
estimate() {
    local out=$1
    shift
    echo "+ xmem-estimate --mode exact --json $*" >&2
    "$ESTIMATE" --mode exact --json "$@" >"$out" 2>"$TMP/estimate.err" ||
        fail "xmem-estimate $*: $(tail -n 20 "$TMP/estimate.err")"
}

# meta TRACE KEY: the value of the trace's `M KEY` line ("" when absent).
meta() {
    awk -v k="$2" '$1=="M" && $2==k {sub(/^M [^ ]+ /, ""); print; exit}' "$1"
}

# peak_g TRACE [ITERATION]: the largest sum of live device ('g') bytes, over the whole trace
# or within one iteration (storages live at its start included).
peak_g() {
    awk -v want="${2:-0}" '$1=="I"{it=$2} $1=="A" && $4=="g"{live[$2]=$3; cur+=$3}
        $1=="F" && ($2 in live){cur-=live[$2]; delete live[$2]}
        (want==0 || it==want) && cur>pk {pk=cur} END{print pk+0}' "$1"
}
