#!/usr/bin/env bash
# Runs `xmem sim --json` on every golden trace here and compares the output byte for byte
# with NAME.expected.json (timing fields removed), checks the hand-computed values in
# NAME.check, and the exit status in NAME.rc (default 0).
#   golden.sh XMEM_BIN_DIR            compare (what tests/integration/11-golden.sh runs)
#   golden.sh XMEM_BIN_DIR --update   rewrite NAME.expected.json; the .check files still
#                                     have to pass, so a change cannot be blessed blindly.
set -u
bin=${1:?usage: golden.sh BIN_DIR [--update]}
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 1
strip_timing() { grep -v '^  "replay_seconds": '; }
failed=0 count=0
for input in *.xtrace *.snapshot.json; do
    [ -e "$input" ] || continue
    name=${input%.xtrace}
    name=${name%.json}
    count=$((count + 1))
    args=$(cat "$name.args" 2>/dev/null || true)
    want_rc=$(cat "$name.rc" 2>/dev/null || echo 0)
    # shellcheck disable=SC2086  # args are whitespace-separated options by design
    out=$("$bin/xmem" sim --json $args "$input")
    rc=$?
    if [ "$rc" != "$want_rc" ]; then
        echo "FAIL $name: exit $rc, expected $want_rc"; failed=1; continue
    fi
    if ! printf '%s\n' "$out" | python3 "$here/check.py" "$name.check"; then
        echo "FAIL $name: hand-computed values differ (see $name.check)"; failed=1; continue
    fi
    if [ "$update" = --update ]; then
        printf '%s\n' "$out" | strip_timing > "$name.expected.json"
        echo "updated $name.expected.json"
        continue
    fi
    if ! diff -u <(strip_timing < "$name.expected.json") <(printf '%s\n' "$out" | strip_timing); then
        echo "FAIL $name: output differs from $name.expected.json"; failed=1; continue
    fi
    echo "ok   $name"
done
[ "$count" -gt 0 ] || { echo "FAIL: no golden traces in $here"; exit 1; }
exit $failed
