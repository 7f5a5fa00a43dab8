#!/usr/bin/env bash
# What would fit (issue 30): `xmem estimate --sweep` on an MLP whose memory grows with its
# batch. A list names the largest batch whose limit fits --fit; set to one batch's own
# limit, that batch is the answer. The interval search lands on a batch that fits while the
# next one does not, each checked by an estimate of its own. A value the script refuses is
# named with the script's reason, and the sweep goes on. --what-if alloc-conf replays the same
# trace under other allocator settings.
source "$(dirname "$0")/80-torch2-common.bash"
B=${XMEM_BUILD:?}/bin
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat >"$TMP/mlp.py" <<'PY'
import argparse
import torch
p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, default=32)
a = p.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(a.batch_size, 1024, device="cuda")
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
PY
cd "$TMP" || exit 1
export PATH="$venv/bin:$PATH"
est() { "$B/xmem-estimate" --gpu A100-40GB --mode fast "$@"; }
field() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

est --json -- python mlp.py --batch-size 4096 >"$TMP/one.json" || fail "one estimate"
fit=$(field "$TMP/one.json" "['limit_bytes']")

est --json --fit "$fit" --sweep --batch-size=256,x,4096,16384 -- python mlp.py --batch-size 32 \
    >"$TMP/list.json" 2>"$TMP/list.err" || { cat "$TMP/list.err"; fail "the list sweep"; }
[ "$(field "$TMP/list.json" "['largest_fitting']")" = 4096 ] ||
    { cat "$TMP/list.json"; fail "the largest batch within batch 4096's own limit is not 4096"; }
[ "$(field "$TMP/list.json" "['points'][3]['fits']")" = False ] || fail "batch 16384 said to fit"
field "$TMP/list.json" "['points'][1]['error']" | grep -q "invalid int value: 'x'" ||
    { cat "$TMP/list.json"; fail "the refused value is not named with the script's reason"; }
echo "ok: a list sweep names batch 4096 within its own limit, and the script's reason for x"

est --json --fit "$fit" --sweep --batch-size=1..16384 -- python mlp.py >"$TMP/search.json" ||
    fail "the interval search"
best=$(field "$TMP/search.json" "['largest_fitting']")
[ "$best" -ge 4096 ] && [ "$best" -lt 16384 ] || fail "the search found $best"
for b in "$best" $((best + 1)); do
    est --json -- python mlp.py --batch-size "$b" >"$TMP/$b.json" || fail "estimate of $b"
done
[ "$(field "$TMP/$best.json" "['limit_bytes']")" -le "$fit" ] || fail "$best does not fit alone"
[ "$(field "$TMP/$((best + 1)).json" "['limit_bytes']")" -gt "$fit" ] ||
    fail "$((best + 1)) fits too: the search stopped short"
echo "ok: the search finds batch $best, the largest that fits, as single estimates agree"

est --sweep --batch-size=256,4096 -- python mlp.py >"$TMP/text" || fail "the text sweep"
grep -q '^largest that fits: --batch-size=4096$' "$TMP/text" || { cat "$TMP/text"; fail "text"; }
echo "ok: the text names the largest batch that fits the GPU"

# --what-if alloc-conf=...: the same trace replayed under other allocator settings equals
# the estimate of that trace with those settings; a change the capture applies needs the
# command, which a trace has not (the capture's changes: 19-estimate-what-if.sh).
est --keep-trace "$TMP/mlp.xtrace" --json -- python mlp.py --batch-size 3000 >/dev/null ||
    fail "keep the trace"
conf=expandable_segments:True
"$B/xmem-estimate" --gpu A100-40GB --json --trace-in "$TMP/mlp.xtrace" --what-if "alloc-conf=$conf" \
    >"$TMP/wi.json" || fail "--what-if"
"$B/xmem-estimate" --gpu A100-40GB --json --trace-in "$TMP/mlp.xtrace" --alloc-conf "$conf" \
    >"$TMP/ac.json" || fail "--alloc-conf"
[ "$(field "$TMP/wi.json" "['what_if'][0]['peak_bytes']")" = "$(field "$TMP/ac.json" "['peak_bytes']")" ] ||
    fail "--what-if alloc-conf=$conf differs from --alloc-conf $conf"
out=$("$B/xmem-estimate" --trace-in "$TMP/mlp.xtrace" --what-if amp=bf16 2>&1)
[ $? = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q '^xmem: --what-if amp=bf16: ' ||
    fail "amp=bf16 is not refused with one line: $out"
echo "ok: --what-if alloc-conf equals --alloc-conf on the same trace; amp on a trace is refused in one line"
