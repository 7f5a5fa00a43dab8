#!/usr/bin/env bash
# Runs every tests/integration/NN-*.sh in order, each in its own process with a timeout.
# A script exits 0 (pass), 77 (skip, with a reason on stdout) or anything else (fail).
# Environment for the scripts: XMEM_BUILD (build tree), XMEM_SRC (source tree).
set -u
here=$(cd "$(dirname "$0")" && pwd)
export XMEM_SRC=$(cd "$here/../.." && pwd)
export XMEM_BUILD=${XMEM_BUILD:-$XMEM_SRC/build}
timeout_s=${XMEM_TEST_TIMEOUT:-900}
pass=0 fail=0 skip=0 failed=()
for t in "$here"/[0-9][0-9]-*.sh; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .sh)
    log=$(mktemp /tmp/xmem-it-$name.XXXXXX)
    start=$(date +%s)
    timeout --kill-after=10 "$timeout_s" bash "$t" >"$log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    case $rc in
    0) pass=$((pass + 1)); echo "ok   $name (${secs}s)" ;;
    77) skip=$((skip + 1)); echo "skip $name: $(tail -n 1 "$log")" ;;
    *) fail=$((fail + 1)); failed+=("$name"); echo "FAIL $name (exit $rc, ${secs}s); last lines:"
       tail -n 40 "$log" | sed 's/^/    /' ;;
    esac
    rm -f "$log"
done
echo "integration: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
