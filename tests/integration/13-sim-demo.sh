#!/usr/bin/env bash
# examples/sim-demo.sh runs end to end and writes its timeline page.
set -u
[ -x "$XMEM_BUILD/bin/xmem-sim" ] || { echo "xmem-sim not built in $XMEM_BUILD"; exit 77; }
out=$(mktemp -d /tmp/xmem-it13.XXXXXX)
trap 'rm -rf "$out"' EXIT
XMEM_DEMO_OUT=$out "$XMEM_SRC/examples/sim-demo.sh" | tee "$out/log" || exit 1
grep -q 'peak reserved' "$out/log" || { echo "FAIL: no peaks printed"; exit 1; }
grep -q 'OUT OF MEMORY' "$out/log" || { echo "FAIL: the 384 MiB run should run out of memory"; exit 1; }
[ -s "$out/mlp-adam.html" ] || { echo "FAIL: no timeline page"; exit 1; }
