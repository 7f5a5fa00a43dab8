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
# A sweep runs an estimate per point and may take minutes: far more than run's default limit.
RUN_TIMEOUT=900
# What a failed check below prints along with the last output: the sweep's own answers.
log_watch "$TMP/list.json" "$TMP/text"
est=("$B/xmem-estimate" --gpu A100-40GB --mode fast)

run_to "$TMP/one.json" "${est[@]}" --json -- python mlp.py --batch-size 4096
expect_rc 0 "one estimate"
fit=$(json "$TMP/one.json" "j['limit_bytes']")

run_to "$TMP/list.json" "${est[@]}" --json --fit "$fit" --sweep --batch-size=256,x,4096,16384 -- \
    python mlp.py --batch-size 32
expect_rc 0 "the list sweep"
expect_field "$TMP/list.json" largest_fitting 4096 \
    "the largest batch within batch 4096's own limit is not 4096"
expect_eq "$(json "$TMP/list.json" "j['points'][3]['fits']")" False "batch 16384 said to fit"
expect_true "the refused value is not named with the script's reason" \
    grep -q "invalid int value: 'x'" <<<"$(json "$TMP/list.json" "j['points'][1]['error']")"
pass "a list sweep names batch 4096 within its own limit, and the script's reason for x"

run_to "$TMP/search.json" "${est[@]}" --json --fit "$fit" --sweep --batch-size=1..16384 -- \
    python mlp.py
expect_rc 0 "the interval search"
best=$(json "$TMP/search.json" "j['largest_fitting']")
expect_true "the search found $best" [ "$best" -ge 4096 ]
expect_true "the search found $best" [ "$best" -lt 16384 ]
for b in "$best" $((best + 1)); do
    run_to "$TMP/$b.json" "${est[@]}" --json -- python mlp.py --batch-size "$b"
    expect_rc 0 "estimate of $b"
done
expect_true "$best does not fit alone" [ "$(json "$TMP/$best.json" "j['limit_bytes']")" -le "$fit" ]
expect_true "$((best + 1)) fits too: the search stopped short" \
    [ "$(json "$TMP/$((best + 1)).json" "j['limit_bytes']")" -gt "$fit" ]
pass "the search finds batch $best, the largest that fits, as single estimates agree"

run_to "$TMP/text" "${est[@]}" --sweep --batch-size=256,4096 -- python mlp.py
expect_rc 0 "the text sweep"
expect_true "text" grep -q '^largest that fits: --batch-size=4096$' "$TMP/text"
pass "the text names the largest batch that fits the GPU"

# --what-if alloc-conf=...: the same trace replayed under other allocator settings equals
# the estimate of that trace with those settings; a change the capture applies needs the
# command, which a trace has not (the capture's changes: 19-estimate-what-if.sh).
run_to /dev/null "${est[@]}" --keep-trace "$TMP/mlp.xtrace" --json -- python mlp.py --batch-size 3000
expect_rc 0 "keep the trace"
conf=expandable_segments:True
run_to "$TMP/wi.json" "$B/xmem-estimate" --gpu A100-40GB --json --trace-in "$TMP/mlp.xtrace" \
    --what-if "alloc-conf=$conf"
expect_rc 0 "--what-if"
run_to "$TMP/ac.json" "$B/xmem-estimate" --gpu A100-40GB --json --trace-in "$TMP/mlp.xtrace" \
    --alloc-conf "$conf"
expect_rc 0 "--alloc-conf"
expect_eq "$(json "$TMP/wi.json" "j['what_if'][0]['peak_bytes']")" \
    "$(json "$TMP/ac.json" "j['peak_bytes']")" "--what-if alloc-conf=$conf differs from --alloc-conf $conf"
run "$B/xmem-estimate" --trace-in "$TMP/mlp.xtrace" --what-if amp=bf16
expect_rc 2 "amp=bf16 is not refused with one line"
expect_eq "$(printf '%s\n' "$RUN_OUT" | wc -l)" 1 "amp=bf16 is not refused with one line"
expect_out '^xmem: --what-if amp=bf16: ' "amp=bf16 is not refused with one line"
pass "--what-if alloc-conf equals --alloc-conf on the same trace; amp on a trace is refused in one line"
finish
