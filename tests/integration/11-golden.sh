#!/usr/bin/env bash
# Golden traces: `xmem sim --json` output byte for byte, plus the hand-computed values.
set -u
[ -x "$XMEM_BUILD/bin/xmem-sim" ] || { echo "xmem-sim not built in $XMEM_BUILD"; exit 77; }
exec "$XMEM_SRC/tests/golden/golden.sh" "$XMEM_BUILD/bin"
