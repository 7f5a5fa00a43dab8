#!/usr/bin/env bash
# xmem-estimate --mode fast|exact|auto: the JSON says which capture made the estimate, auto
# falls back to the exact capture with the fast mode's one-line reason, a bad mode is one
# `xmem: --mode:` line and exit 2.
source "$(dirname "$0")/70-fast-common.bash"
"$ESTIMATE" --help | grep -q -- '--mode' || { echo "xmem-estimate has no --mode"; exit 77; }

small=(python3 "$WORKLOADS/transformer.py" --arch gpt --layers 2 --hidden 64 --heads 4 --seq 32
       --vocab 1000 --batch-size 2)
cat >"$TMP/masked.py" <<'PY'
import torch
model = torch.nn.Linear(16, 4).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    out = model(torch.randn(8, 16).cuda())
    loss = out[out > 0].sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
PY

# mode_of ESTIMATE-ARGS...: runs xmem-estimate --json, prints the JSON's "mode".
mode_of() {
    "$ESTIMATE" --json --gpu H100-80GB "$@" >"$TMP/e.json" 2>"$TMP/e.err" || {
        echo "FAILED: xmem-estimate $*" >&2; cat "$TMP/e.err" >&2; exit 1; }
    $PY -c "import json; print(json.load(open('$TMP/e.json'))['mode'])"
}

[ "$(mode_of --mode fast -- "${small[@]}")" = fast ] || { echo "FAILED: --mode fast"; exit 1; }
echo "ok: --mode fast estimates from the fast capture"
[ "$(mode_of --mode auto -- "${small[@]}")" = fast ] || { echo "FAILED: auto does not use fast mode first"; exit 1; }
echo "ok: --mode auto uses fast mode when it can"
[ "$(mode_of -- "${small[@]}")" = fast ] || { echo "FAILED: the default is not auto (fast first)"; exit 1; }
echo "ok: the default is auto: the fast capture first"
[ "$(mode_of --mode auto -- python3 "$TMP/masked.py")" = exact ] || { echo "FAILED: auto fall back"; exit 1; }
grep -q '^xmem: fast mode: unsupported: aten::index' "$TMP/e.err" &&
    grep -q 'falling back to the exact capture' "$TMP/e.err" || {
    echo "FAILED: auto did not say why it fell back:"; cat "$TMP/e.err"; exit 1; }
echo "ok: auto falls back: $(grep '^xmem: fast mode' "$TMP/e.err")"
rc=0
"$ESTIMATE" --mode fast -- python3 "$TMP/masked.py" >/dev/null 2>"$TMP/e.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'xmem: profiling the job failed (xmem-profile-fast exit status 3)' "$TMP/e.err" || {
    echo "FAILED: --mode fast on an unsupported script: exit $rc"; cat "$TMP/e.err"; exit 1; }
echo "ok: --mode fast does not fall back"
rc=0
"$ESTIMATE" --mode quick -- python3 x.py >/dev/null 2>"$TMP/e.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "^xmem: --mode: expected fast, exact or auto, got 'quick'$" "$TMP/e.err" || {
    echo "FAILED: bad --mode: exit $rc"; cat "$TMP/e.err"; exit 1; }
echo "ok: a bad --mode is one line and exit 2"
