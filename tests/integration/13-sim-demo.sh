#!/usr/bin/env bash
# examples/sim-demo.sh runs end to end and writes its timeline page.
set -u
[ -x "$XMEM_BUILD/bin/xmem-sim" ] || { echo "xmem-sim not built in $XMEM_BUILD"; exit 77; }
out=$(mktemp -d /tmp/xmem-it13.XXXXXX)
trap 'rm -rf "$out"' EXIT
. "$(dirname "$0")/lib/assert.bash"
log_watch "$out/log"
XMEM_DEMO_OUT=$out "$XMEM_SRC/examples/sim-demo.sh" | tee "$out/log" || fail "examples/sim-demo.sh failed"
expect_true "peaks printed" grep -q 'peak reserved' "$out/log"
expect_true "the 384 MiB run runs out of memory" grep -q 'OUT OF MEMORY' "$out/log"
expect_true "a timeline page" [ -s "$out/mlp-adam.html" ]
finish
