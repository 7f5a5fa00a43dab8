#!/usr/bin/env bash
# Snapshots recorded on real GPUs (tests/groundtruth/snapshots, see its README) replay
# block-exact: `xmem sim --verify` must place every block at the recorded address, match every
# segment event and both peaks. Any broken allocator rule (rounding, splitting, best fit,
# segment sizes) moves some block and fails this test.
set -u
bin=$XMEM_BUILD/bin
[ -x "$bin/xmem-sim" ] || { echo "xmem-sim not built in $XMEM_BUILD"; exit 77; }
tmp=$(mktemp -d /tmp/xmem-it15.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/assert.bash"
keep_going
count=0

for gz in "$XMEM_SRC"/tests/groundtruth/snapshots/*.json.gz; do
    name=$(basename "$gz" .json.gz)
    torch=${name##*-torch}
    count=$((count + 1))
    zcat "$gz" >"$tmp/$name.json"
    "$bin/xmem-sim" --verify --json --torch "$torch" "$tmp/$name.json" >"$tmp/out.json"
    rc=$?
    expect_true "$name replays block-exact" python3 - "$tmp/$name.json" "$tmp/out.json" "$rc" <<'PY' &&
import json, sys
trace = json.load(open(sys.argv[1]))["device_traces"][0]
out = json.load(open(sys.argv[2]))
v = out["verify"]
allocs = sum(1 for e in trace if e["action"] == "alloc")
segments = sum(1 for e in trace if e["action"].startswith("segment_"))
problems = []
if sys.argv[3] != "0":
    problems.append("exit %s" % sys.argv[3])
if v["diverged"]:
    problems.append("diverged: %s" % json.dumps(v["divergence"]))
if v["block_addresses_matched"] != allocs:
    problems.append("%d of %d block addresses matched" % (v["block_addresses_matched"], allocs))
if v["segment_events_matched"] != segments:
    problems.append("%d of %d segment events matched" % (v["segment_events_matched"], segments))
partial = "-partial-" in sys.argv[1]
if out["snapshot"]["partial"] != partial:
    problems.append("partial is %s" % out["snapshot"]["partial"])
if partial and not (out["snapshot"]["rebuild"] or "").startswith("rebuilt the state at entry 0"):
    problems.append("rebuild: %s" % out["snapshot"]["rebuild"])
if v["peaks_matched"] != 2:
    problems.append("%d of 2 peaks matched" % v["peaks_matched"])
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
        echo "ok   $name"
done
expect_true "snapshots in tests/groundtruth/snapshots" [ "$count" -gt 0 ]
finish
