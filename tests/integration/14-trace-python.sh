#!/usr/bin/env bash
# One Python definition of docs/trace-format.md (daemon/profiler/python/xmem_trace.py):
# its reader and writer reproduce, record for record, traces the C++ capture wrote
# (examples/traces/tiny-mlp.xtrace) and the example generator wrote (mlp-adam.xtrace); the
# fast capture's writer, which spells its records through it, writes a trace `xmem sim` and
# tests/workloads/check_trace.py accept, with the simulator's spelling of X records.
set -u
[ -x "$XMEM_BUILD/bin/xmem-sim" ] || { echo "xmem-sim not built in $XMEM_BUILD"; exit 77; }
tmp=$(mktemp -d /tmp/xmem-it14.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
PY=${PYTHON:-python3}
# -S: the capture's sitecustomize.py sits beside xmem_trace and is for profiled scripts only.
pypath=$XMEM_SRC/daemon/profiler/python:$XMEM_SRC/daemon/profiler/fast/python
. "$(dirname "$0")/lib/assert.bash"
keep_going

for trace in "$XMEM_SRC"/examples/traces/*.xtrace; do
    expect_true "xmem_trace reads and rewrites ${trace##*/}" \
        env PYTHONPATH="$pypath" "$PY" -S - "$trace" "$tmp/copy" <<'PY'
import sys
import xmem_trace
src, out = sys.argv[1], sys.argv[2]
with open(out, "w") as f:
    f.write(xmem_trace.VERSION_LINE + "\n")
    for _, letter, fields in xmem_trace.records(src):
        f.write(xmem_trace.record(letter, *fields))
PY
    # cmp names the first difference.
    expect_true "xmem_trace reproduces ${trace##*/} unchanged" cmp "$trace" "$tmp/copy" &&
        echo "ok: xmem_trace reads and rewrites ${trace##*/} unchanged"
done

# The fast writer without torch: it needs none to write records.
expect_true "the fast writer writes a trace without torch" \
    env PYTHONPATH="$pypath" "$PY" -S - "$tmp/fast.xtrace" <<'PY'
import sys
from xmem_fast.trace_writer import TraceWriter
w = TraceWriter()
w.start(sys.argv[1])
w.meta("capture", "fast")
w.phase("setup")
w.alloc(1, 4096, "|aten::empty")
w.iteration(1)
w.phase("forward")
w.kernel("conv1 conv x=1,3,8,8 w=4,3,3,3 s=1,1 p=1,1 d=1,1 g=1 e=4 t=0")
w.alloc(2, 1000, "conv1|aten::convolution")
w.memory_fraction(1.0)
w.memory_fraction(0.5)
w.empty_cache()
w.free(2, 1000)
w.finish()
PY
log_watch "$tmp/fast.xtrace"
expect_true "the fast writer spells fraction 1 as the C++ writers do" grep -qx 'X 1' "$tmp/fast.xtrace"
expect_true "the fast writer spells fraction 0.5 as the C++ writers do" grep -qx 'X 0.5' "$tmp/fast.xtrace"
expect_true "check_trace.py accepts the fast writer's trace" \
    "$PY" "$XMEM_SRC/tests/workloads/check_trace.py" "$tmp/fast.xtrace" >/dev/null
run "$XMEM_BUILD/bin/xmem-sim" --torch 2.6 "$tmp/fast.xtrace"
expect_rc 0 "xmem sim accepts the fast writer's trace"
expect_out 'events' "xmem sim replays the fast writer's trace"
[ "$fails" -eq 0 ] && echo "ok: the fast writer's trace reads in Python and in xmem sim"
finish
