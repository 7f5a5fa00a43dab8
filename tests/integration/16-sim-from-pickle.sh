#!/usr/bin/env bash
# xmem sim --from-pickle: PyTorch's pickled snapshot read without Python and without running
# any code. The fixtures (tests/groundtruth/pickles/README.md) are a real snapshot pickled with
# protocols 2 and 4, which must verify exactly as its JSON form does, and two hostile pickles
# that would call os.system, which must be refused with one line and nothing run.
set -u
bin=$XMEM_BUILD/bin
[ -x "$bin/xmem-sim" ] || { echo "xmem-sim not built in $XMEM_BUILD"; exit 77; }
tmp=$(mktemp -d /tmp/xmem-it16.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pickles=$XMEM_SRC/tests/groundtruth/pickles

. "$(dirname "$0")/lib.bash"

zcat "$XMEM_SRC/tests/groundtruth/snapshots/cs336-torch2.6.json.gz" >"$tmp/cs336.json"
"$bin/xmem-sim" --json --verify --torch 2.6 "$tmp/cs336.json" | grep -v replay_seconds |
    sed 's|"trace": .*|"trace": X,|' >"$tmp/from-json"
for p in 2 4; do
    expect 0 '9 segment events, 36 block addresses, 0 OOMs and 2 peaks match' \
        "$bin/xmem-sim" --verify --torch 2.6 --from-pickle "$pickles/cs336-torch2.6.p$p.pickle"
    "$bin/xmem-sim" --json --verify --torch 2.6 --from-pickle="$pickles/cs336-torch2.6.p$p.pickle" |
        grep -v replay_seconds | sed 's|"trace": .*|"trace": X,|' >"$tmp/from-pickle"
    expect_true "protocol $p: the pickle's report is the JSON's" diff -q "$tmp/from-json" "$tmp/from-pickle"
done

rm -f /tmp/xmem-pickle-pwned
expect_error "asks for GLOBAL 'posix.system', which would run code" \
    "$bin/xmem-sim" --from-pickle "$pickles/hostile.p2.pickle"
expect_error "asks for STACK_GLOBAL 'posix.system', which would run code" \
    "$bin/xmem-sim" --from-pickle "$pickles/hostile.p4.pickle"
expect_false "a hostile pickle ran code" [ -e /tmp/xmem-pickle-pwned ]

# Truncated, exponentially shared, and not a pickle at all: one line each.
head -c 300 "$pickles/cs336-torch2.6.p4.pickle" >"$tmp/truncated.pickle"
expect_error 'byte [0-9]+: .*(past the end|without STOP)' "$bin/xmem-sim" --from-pickle "$tmp/truncated.pickle"
python3 -c '
import sys
body = b"\x80\x04]\x940" + b"".join(b"(h%ch%cl\x940" % (i, i) for i in range(60)) + b"h<."
sys.stdout.buffer.write(body)' >"$tmp/laughs.pickle"
expect_error 'would expand beyond 4 values per byte' "$bin/xmem-sim" --from-pickle "$tmp/laughs.pickle"
# Strings need not be UTF-8 in a hostile file (found by fuzzing: the JSON writer threw).
printf '\x80\x04}\x8c\x02\xff\xfeN\x73.' >"$tmp/latin.pickle"
expect_error "no 'device_traces'" "$bin/xmem-sim" --from-pickle "$tmp/latin.pickle"
expect_error '--from-pickle needs a pickled snapshot' "$bin/xmem-sim" --from-pickle "$tmp/cs336.json"
expect_error "read it with: xmem sim --from-pickle" "$bin/xmem-sim" "$pickles/cs336-torch2.6.p4.pickle"

finish
