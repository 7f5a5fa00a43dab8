#!/usr/bin/env bash
# xmem dispatcher and xmem-sim command line: help, version, unknown commands, usage errors
# (exit 2, one "xmem:" line), format detection, stdin, human and JSON output, timeline page.
set -u
bin=$XMEM_BUILD/bin
[ -x "$bin/xmem-sim" ] || { echo "xmem-sim not built in $XMEM_BUILD"; exit 77; }
tmp=$(mktemp -d /tmp/xmem-it10.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
golden=$XMEM_SRC/tests/golden

. "$(dirname "$0")/lib.bash"

expect 0 '^xmem [0-9]+\.[0-9]+\.[0-9]+$' "$bin/xmem" --version
expect 0 '^  sim$' "$bin/xmem" --help
expect_error "unknown command 'frobnicate'" "$bin/xmem" frobnicate
expect_error "'../sim' is not a command" "$bin/xmem" ../sim
expect_error 'no command given' "$bin/xmem"
expect 0 'usage: xmem sim' "$bin/xmem" sim --help
expect_error 'no trace given' "$bin/xmem" sim
expect_error "unknown option '--frobnicate'" "$bin/xmem" sim --frobnicate "$golden/basic.xtrace"
expect_error "--capacity '12Q' is not a size" "$bin/xmem" sim --capacity 12Q "$golden/basic.xtrace"
expect_error "torch version '0.4'" "$bin/xmem" sim --torch 0.4 "$golden/basic.xtrace"
expect_error 'PYTORCH_CUDA_ALLOC_CONF' "$bin/xmem" sim --alloc-conf nonsense:1 "$golden/basic.xtrace"
expect_error 'cannot open trace: No such file' "$bin/xmem" sim "$tmp/missing.xtrace"
expect_error '--verify needs a PyTorch snapshot' "$bin/xmem" sim --verify "$golden/basic.xtrace"

printf '' >"$tmp/empty"
expect_error 'the trace is empty' "$bin/xmem" sim "$tmp/empty"
printf '\x80\x04\x95pickle' >"$tmp/snap.pickle"
expect_error 'a pickled snapshot; export it to JSON first' "$bin/xmem" sim "$tmp/snap.pickle"
printf 'hello\n' >"$tmp/text"
expect_error 'unknown trace format' "$bin/xmem" sim "$tmp/text"

# Human summary: peaks in binary units; the dispatcher and xmem-sim agree.
expect 0 'peak allocated +8.00 KiB' "$bin/xmem" sim "$golden/basic.xtrace"
expect 0 'peak reserved +2.00 MiB' "$bin/xmem-sim" "$golden/basic.xtrace"
expect 0 'OUT OF MEMORY at event 6 \(line 9\)' "$bin/xmem" sim --capacity 64M "$golden/oom.xtrace"
# Standard input, both formats.
expect 0 '"allocated_bytes.all.peak": 8192,' "$bin/xmem" sim --json - <"$golden/basic.xtrace"
expect 0 '"format": "snapshot",' "$bin/xmem" sim --json - <"$golden/snapshot-verify.snapshot.json"
# --torch overrides the trace's metadata, and 1.13 has no requested_bytes keys.
expect 0 '"torch_source": "--torch",' "$bin/xmem" sim --json --torch 2.1 "$golden/basic.xtrace"
run "$bin/xmem" sim --json "$golden/basic.xtrace"
expect_no_out requested_bytes "torch 1.13 output has no requested_bytes keys"
# The JSON is one valid object carrying every required key.
"$bin/xmem" sim --json --capacity 64M "$golden/oom.xtrace" >"$tmp/oom.json"
expect_true "JSON output" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("allocated_bytes.all.peak", "reserved_bytes.all.peak", "events", "torch", "oom"):
    assert k in d, k
assert d["oom"]["message"].startswith("CUDA out of memory. Tried to allocate 20.00 MiB"), d["oom"]
' "$tmp/oom.json"

# Timeline: one self-contained page, peaks labelled, no script, nothing fetched.
expect 0 "timeline +$tmp/t.html" "$bin/xmem" sim --timeline "$tmp/t.html" "$XMEM_SRC/examples/traces/mlp-adam.xtrace"
expect_true "timeline page labels the peak" grep -q 'peak reserved 426.00 MiB' "$tmp/t.html"
expect_false "timeline page has a script or fetches something" grep -qiE '<script|src=|href=' "$tmp/t.html"
expect_error 'cannot write timeline' "$bin/xmem" sim --timeline /nonexistent/t.html "$golden/basic.xtrace"
finish
