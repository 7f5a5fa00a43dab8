#!/usr/bin/env bash
# The trace checker the capture tests rely on must fail on broken traces (otherwise tests
# 20-28 could not fail): each corruption of a valid trace is rejected with its reason.
set -euo pipefail
: "${XMEM_SRC:?}"
PY=/usr/bin/python3
CHECK="$PY $XMEM_SRC/tests/workloads/check_trace.py"
TMP=$(mktemp -d /tmp/xmem-capture-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/lib/assert.bash"
log_watch "$TMP/err"

cat >"$TMP/good.trace" <<'T'
#xmem-trace 1
M torch 1.13.1
M steps 1
P setup
S 1 fc|aten::empty
A 1 4000 g 0 1
I 1
P data
A 3 3072 h 0 0
A 4 3072 g 0 0
F 3
P forward
S 2 fc|aten::addmm
A 5 320 g 0 2
P backward
A 6 4000 g 0 0
P optimizer
F 4
F 5
F 6
Z 5 4 4000
T
$CHECK "$TMP/good.trace" --steps 1 --phases-in-order --min-setup-gpu-bytes 4000 >/dev/null
echo "ok: the valid example passes"

# reject NAME SED-EXPR PATTERN [CHECK-ARGS...]
reject() {
    local name=$1 expr=$2 pattern=$3 rc=0
    shift 3
    sed "$expr" "$TMP/good.trace" >"$TMP/$name.trace"
    $CHECK "$TMP/$name.trace" "$@" >/dev/null 2>"$TMP/err" || rc=$?
    expect_true "$name accepted" [ "$rc" -ne 0 ]
    expect_true "$name rejected without saying '$pattern'" grep -q "$pattern" "$TMP/err"
    echo "ok: rejects $name: $(cat "$TMP/err")"
}
reject header '1s/.*/#xmem-trace 2/' "not an xmem trace"
reject z-totals 's/^Z 5 4 4000$/Z 5 4 4001/' "disagrees"
reject truncated '/^Z /d' "no Z line"
reject unmatched-free 's/^F 3$/F 9/' "not live"
reject double-alloc 's/^A 4 3072/A 1 3072/' "A for live id"
reject undefined-string 's/^A 5 320 g 0 2$/A 5 320 g 0 7/' "used before"
reject bad-phase 's/^P data$/P dataloading/' "unknown phase"
reject meta-after-alloc '/^I 1$/i M late value' "M after the first A"
reject iteration-gap 's/^I 1$/I 2/' "iteration 2 follows 0"
reject wrong-steps 's/^M steps 1$/M steps 1/' "1 iterations, expected 3" --steps 3
reject phase-order '/^P backward$/d; s/^P forward$/P backward/' "missing" --phases-in-order
reject phases-swapped 's/^P forward$/P tmp/; s/^P backward$/P forward/; s/^P tmp$/P backward/' "out of order" --phases-in-order
reject params-lost 's/^A 1 4000 g 0 1$/A 1 4000 h 0 1/' "parameters not accounted" --min-setup-gpu-bytes 4000
