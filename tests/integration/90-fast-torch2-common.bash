# Shared by the torch 2.x fast-mode tests (TESTS, area torch2; sourced, not a test itself),
# built on lib/assert.bash. They need the project venv's torch 2.x (XMEM_VENV, default $XMEM_SRC/.venv); the
# 70-78 tests keep covering the system torch 1.13.
set -euo pipefail
: "${XMEM_BUILD:?}" "${XMEM_SRC:?}"
. "$(dirname "${BASH_SOURCE[0]}")/lib/assert.bash"
VENV=${XMEM_VENV:-$XMEM_SRC/.venv}
VPY=$VENV/bin/python
[ -x "$VPY" ] || { echo "no venv python at $VPY (set XMEM_VENV)"; exit 77; }
"$VPY" -c 'import sys, torch; sys.exit(0 if int(torch.__version__.split(".")[0]) >= 2 else 1)' 2>/dev/null ||
    { echo "$VPY has no torch 2.x"; exit 77; }
FAST=$XMEM_BUILD/bin/xmem-profile-fast
WORKLOADS=$XMEM_SRC/tests/workloads
TMP=$(mktemp -d /tmp/xmem-fast2-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# A capture takes minutes on a busy machine: run and run_to wait as long as run-all.sh does.
RUN_TIMEOUT=${RUN_TIMEOUT:-900}
# The tests keep a capture's output there: a failure shows its tail.
log_watch "$TMP/out" "$TMP/err"
