#!/usr/bin/env bash
# A script's own memory records run under both captures (issue 33, item 6): a
# memory-profiling script calls torch.cuda.memory._record_memory_history first thing, and
# memory_summary, memory_snapshot, _snapshot and _dump_snapshot at the end. They answer from
# the capture's counts and are no-ops for what a capture cannot have (docs/capture.md, "A
# script's own memory records"): the dumped snapshot is a pickle torch's memory_viz loads.
source "$(dirname "$0")/85-capture-torch2-common.bash"

cat >"$TMP/records.py" <<'PY'
import sys, torch
torch.cuda.memory._record_memory_history(max_entries=100000)
model = torch.nn.Linear(256, 256).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):  # fewer than the capture's 3 steps: the script's own end runs
    model(torch.randn(32, 256, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad()
summary = torch.cuda.memory_summary()
assert isinstance(summary, str) and summary, summary
assert isinstance(torch.cuda.memory_snapshot(), list)
snapshot = torch.cuda.memory._snapshot()
assert isinstance(snapshot["segments"], list) and isinstance(snapshot["device_traces"], list)
assert torch.cuda.memory.memory_allocated() == torch.cuda.memory_allocated() > 0
torch.cuda.memory._dump_snapshot(sys.argv[1])
torch.cuda.memory._record_memory_history(enabled=None)
print("records done")
PY

# viz PICKLE: torch's memory_viz loads the snapshot and draws it.
viz() {
    "$VPY" - "$1" <<'PY'
import pickle, sys
from torch.cuda import _memory_viz
with open(sys.argv[1], "rb") as f:
    data = pickle.load(f)
assert isinstance(data["segments"], list) and isinstance(data["device_traces"], list)
_memory_viz.segsum(data)
assert "<html" in _memory_viz.trace_plot(data).lower()
assert "<html" in _memory_viz.segment_plot(data).lower()
PY
}

profile "$PROFILE" "$VPY" "$TMP/exact.trace" "$TMP/records.py" "$TMP/exact.pickle" >"$TMP/out"
expect_true "exact: the script's end did not run" grep -q '^records done$' "$TMP/out"
expect_eq "$(meta "$TMP/exact.trace" steps)" 2 "exact: steps of the script that records itself"
expect_true "exact: torch's memory_viz cannot load the dumped snapshot" viz "$TMP/exact.pickle"
echo "ok: the exact capture runs a script's own memory records"

profile "$XMEM_BUILD/bin/xmem-profile-fast" "$VPY" "$TMP/fast.trace" "$TMP/records.py" \
    "$TMP/fast.pickle" >"$TMP/out"
expect_true "fast: the script's end did not run" grep -q '^records done$' "$TMP/out"
expect_eq "$(meta "$TMP/fast.trace" steps)" 2 "fast: steps of the script that records itself"
expect_true "fast: torch's memory_viz cannot load the dumped snapshot" viz "$TMP/fast.pickle"
echo "ok: the fast capture runs a script's own memory records"
