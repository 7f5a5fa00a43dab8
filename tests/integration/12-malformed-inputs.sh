#!/usr/bin/env bash
# xmem sim on 200 damaged traces (seeded truncations, byte flips, huge numbers,
# dropped and duplicated lines) of both formats: every run must end with exit 0 (the
# damage happened to keep the trace valid) or exit 2 and exactly one "xmem: FILE..." line;
# never a signal. The in-process fuzz test (test-trace fuzz_*) does thousands more.
set -u
bin=$XMEM_BUILD/bin
[ -x "$bin/xmem-sim" ] || { echo "xmem-sim not built in $XMEM_BUILD"; exit 77; }
tmp=$(mktemp -d /tmp/xmem-it12.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

python3 - "$XMEM_SRC" "$tmp" <<'PY'
import random, sys
src, out = sys.argv[1], sys.argv[2]
bases = {"x": open(f"{src}/examples/traces/mlp-adam.xtrace", "rb").read(),
         "j": open(f"{src}/tests/golden/snapshot-verify.snapshot.json", "rb").read()}
rng = random.Random(1213)
huge = [b"18446744073709551616", b"99999999999999999999999", b"-1", b"1e400", b"0"]
for n in range(200):
    kind = "x" if n % 2 == 0 else "j"
    data = bytearray(bases[kind])
    how = rng.randrange(5)
    if how == 0:
        data = data[: rng.randrange(len(data))]
    elif how == 1:
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif how == 2:
        at = rng.randrange(len(data))
        while at < len(data) and not chr(data[at]).isdigit():
            at += 1
        end = at
        while end < len(data) and chr(data[end]).isdigit():
            end += 1
        data[at:end] = rng.choice(huge)
    else:
        lines = bytes(data).split(b"\n")
        i = rng.randrange(len(lines))
        if how == 3:
            del lines[i]
        else:
            lines.insert(i, lines[i])
        data = bytearray(b"\n".join(lines))
    open(f"{out}/case{n:03d}.{kind}", "wb").write(bytes(data))
PY

. "$(dirname "$0")/lib/assert.bash"
keep_going
log_watch "$tmp/err"
rejected=0
for f in "$tmp"/case*; do
    "$bin/xmem" sim --json "$f" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ "$rc" = 2 ]; then
        rejected=$((rejected + 1))
        expect_true "$f: exit 2 with one line on stderr" [ "$(wc -l <"$tmp/err")" = 1 ]
        expect_true "$f: exit 2 with a line 'xmem: $f...'" grep -q "^xmem: $f" "$tmp/err"
    else
        expect_eq "$rc" 0 "$f: exit status (0, or 2 with one line)"
    fi
done
echo "12-malformed-inputs: 200 damaged traces, $rejected rejected with one error line"
expect_true "more than 100 of the damaged traces are rejected ($rejected)" [ "$rejected" -gt 100 ]
finish
