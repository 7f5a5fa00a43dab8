# Shared by the torch 2.x workload tests (TESTS, area torch2; sourced, not a test itself),
# built on lib/assert.bash. Each test runs tests/workloads/torch2/ scripts under
# `xmem estimate --json` with the project venv first on PATH, as a user with an activated
# venv does, keeps going after a failed workload (miss), prints one result line per
# (workload, mode), and fails if any failed (finish).
# Needs XMEM_BUILD, XMEM_SRC; XMEM_VENV (default $XMEM_SRC/.venv) with torch 2.x.
set -uo pipefail
: "${XMEM_BUILD:?}" "${XMEM_SRC:?}"
. "$(dirname "${BASH_SOURCE[0]}")/lib/assert.bash"
keep_going
VENV=${XMEM_VENV:-$XMEM_SRC/.venv}
VPY=$VENV/bin/python
ESTIMATE=$XMEM_BUILD/bin/xmem-estimate
T2=$XMEM_SRC/tests/workloads/torch2
[ -x "$ESTIMATE" ] || { echo "xmem-estimate not built"; exit 77; }
TORCH2=$("$VPY" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null) ||
    { echo "no venv with torch at $VENV (make deps)"; exit 77; }
case $TORCH2 in 2.*) ;; *) echo "$VPY has torch $TORCH2, not 2.x"; exit 77 ;; esac
export PATH=$VENV/bin:$PATH HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
TMP=$(mktemp -d /tmp/xmem-torch2-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
GIB=1073741824

# estimate MODE NAME SCRIPT ARGS...: `xmem-estimate --mode MODE --json -- python SCRIPT ARGS`
# into $TMP/NAME-MODE.json (stderr in .err); returns its exit status.
estimate() {
    local mode=$1 name=$2 script=$3
    shift 3
    "$ESTIMATE" --mode "$mode" --json --gpu A100-80GB --steps 2 --timeout "${XMEM_TEST_STEP_TIMEOUT:-120}" \
        -- python "$T2/$script" "$@" >"$TMP/$name-$mode.json" 2>"$TMP/$name-$mode.err"
}

# field NAME MODE KEY: a top-level value of that estimate's JSON.
field() {
    "$VPY" -c "import json; print(json.load(open('$TMP/$1-$2.json')).get('$3'))"
}

# torch_recorded NAME MODE: true when some "torch..." field of the JSON names the venv's
# torch MAJOR.MINOR (the job's own torch, recorded in the trace).
torch_recorded() {
    "$VPY" - "$TMP/$1-$2.json" "${TORCH2%.*}" <<'PY'
import json, sys
j, want = json.load(open(sys.argv[1])), sys.argv[2]
sys.exit(0 if any("torch" in k and str(v).startswith(want) for k, v in j.items()) else 1)
PY
}

# workload MODE NAME SCRIPT ARGS...: estimates, then checks it (checked). One "ok"/"FAIL:"
# line; a failure is counted (miss).
workload() {
    local mode=$1 name=$2 rc=0
    estimate "$@" || rc=$?
    if [ $rc -ne 0 ]; then
        miss "$mode $name: xmem-estimate exit $rc: $(grep -m1 '^xmem:' "$TMP/$name-$mode.err" || tail -n 1 "$TMP/$name-$mode.err")"
        sed 's/^[ |]*//' "$TMP/$name-$mode.err" | grep -E '^[A-Za-z_.]*(Error|Exception)\b' | tail -n 1 |
            sed 's/^/     job: /'
        return 1
    fi
    checked "$@"
}

# checked MODE NAME SCRIPT ARGS...: a finished estimate's allocated peak is above the model's
# own lower bound (lower_bound.py: weights, grads, AdamW state), its peak (context included)
# below 4 GiB + 20 x that bound, and the JSON records the job's torch.
checked() {
    local mode=$1 name=$2 script=$3 lower peak allocated
    shift 3
    [ -s "$TMP/$name.lower" ] || "$VPY" "$T2/lower_bound.py" "$T2/$script" "$@" >"$TMP/$name.lower" 2>"$TMP/lower.err" ||
        { miss "$mode $name: lower_bound.py: $(tail -n 1 "$TMP/lower.err")"; return 1; }
    lower=$(cat "$TMP/$name.lower")
    peak=$(field "$name" "$mode" peak_bytes) allocated=$(field "$name" "$mode" allocated_peak_bytes)
    if [ "$allocated" -le "$lower" ] || [ "$peak" -ge $((4 * GIB + 20 * lower)) ]; then
        miss "$mode $name: allocated peak $allocated not above $lower, or peak $peak not below 4 GiB + 20 x $lower"
        return 1
    fi
    if ! torch_recorded "$name" "$mode"; then
        miss "$mode $name: peak $((peak / 1048576)) MiB but the JSON records no torch $TORCH2 (the job's):" \
            "$(head -c 300 "$TMP/$name-$mode.json")"
        return 1
    fi
    echo "ok   $mode $name: peak $((peak / 1048576)) MiB, allocated $((allocated / 1048576)) MiB (model alone $((lower / 1048576)) MiB)"
    touch "$TMP/$name-$mode.ok"
}

# modes_agree NAME: fast and exact reserved peaks of NAME (the allocator's, no context) within 1 %,
# issue 16's target (all seven agreed to the byte on 2026-12-04), when both passed their checks.
modes_agree() {
    [ -e "$TMP/$1-fast.ok" ] && [ -e "$TMP/$1-exact.ok" ] || { echo "skip agree $1: a mode failed"; return 0; }
    local f e pct
    f=$(field "$1" fast reserved_peak_bytes) e=$(field "$1" exact reserved_peak_bytes)
    pct=$("$VPY" -c "print(f'{100 * ($f - $e) / $e:+.3f}')")
    if within 0.01 "$e" "$f"; then
        echo "ok   agree $1: reserved fast $f B, exact $e B ($pct %)"
    else
        miss "agree $1: reserved fast $f B vs exact $e B ($pct %, more than 1 % apart)"
    fi
}

# both NAME SCRIPT ARGS...: the workload in fast and exact mode, then their agreement.
both() {
    workload fast "$@"
    workload exact "$@"
    modes_agree "$1"
}
