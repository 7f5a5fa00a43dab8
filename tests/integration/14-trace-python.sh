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
fails=0

for trace in "$XMEM_SRC"/examples/traces/*.xtrace; do
    PYTHONPATH=$pypath "$PY" -S - "$trace" "$tmp/copy" <<'PY' || fails=$((fails + 1))
import sys
import xmem_trace
src, out = sys.argv[1], sys.argv[2]
with open(out, "w") as f:
    f.write(xmem_trace.VERSION_LINE + "\n")
    for _, letter, fields in xmem_trace.records(src):
        f.write(xmem_trace.record(letter, *fields))
PY
    if cmp -s "$trace" "$tmp/copy"; then
        echo "ok: xmem_trace reads and rewrites ${trace##*/} unchanged"
    else
        echo "FAIL: xmem_trace does not reproduce ${trace##*/}:"; diff "$trace" "$tmp/copy" | head
        fails=$((fails + 1))
    fi
done

# The fast writer without torch: it needs none to write records.
PYTHONPATH=$pypath "$PY" -S - "$tmp/fast.xtrace" <<'PY' || fails=$((fails + 1))
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
grep -qx 'X 1' "$tmp/fast.xtrace" && grep -qx 'X 0.5' "$tmp/fast.xtrace" || {
    echo "FAIL: the fast writer spells fractions unlike the C++ writers:"; cat "$tmp/fast.xtrace"
    fails=$((fails + 1)); }
"$PY" "$XMEM_SRC/tests/workloads/check_trace.py" "$tmp/fast.xtrace" >/dev/null || fails=$((fails + 1))
"$XMEM_BUILD/bin/xmem-sim" --torch 2.6 "$tmp/fast.xtrace" >"$tmp/sim" 2>&1 && grep -q 'events' "$tmp/sim" || {
    echo "FAIL: xmem sim refused the fast writer's trace:"; cat "$tmp/sim"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "ok: the fast writer's trace reads in Python and in xmem sim"
exit $((fails > 0))
