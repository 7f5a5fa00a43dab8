#!/usr/bin/env bash
# xmem-estimate --mode fast|exact|auto: the JSON says which capture made the estimate, auto
# falls back to the exact capture with the fast mode's one-line reason (which says so), --mode
# fast refuses in one line naming the fix, a bad mode is one `xmem: --mode:` line and exit 2.
source "$(dirname "$0")/70-fast-common.bash"
log_watch "$TMP/e.err"
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
    "$ESTIMATE" --json --gpu H100-80GB "$@" >"$TMP/e.json" 2>"$TMP/e.err" || fail "xmem-estimate $*"
    $PY -c "import json; print(json.load(open('$TMP/e.json'))['mode'])"
}

expect_eq "$(mode_of --mode fast -- "${small[@]}")" fast "--mode fast"
echo "ok: --mode fast estimates from the fast capture"
expect_eq "$(mode_of --mode auto -- "${small[@]}")" fast "auto does not use fast mode first"
echo "ok: --mode auto uses fast mode when it can"
expect_eq "$(mode_of -- "${small[@]}")" fast "the default is not auto (fast first)"
echo "ok: the default is auto: the fast capture first"
expect_eq "$(mode_of --mode auto -- python3 "$TMP/masked.py")" exact "auto fall back"
expect_true "auto did not say why it fell back" grep -q '^xmem: fast mode: unsupported: aten::index' "$TMP/e.err"
expect_true "auto did not say, in the same line, that it fell back" \
    grep -q '^xmem: fast mode: unsupported: aten::index.*; falling back to the exact capture' "$TMP/e.err"
echo "ok: auto falls back: $(grep '^xmem: fast mode' "$TMP/e.err")"
rc=0
"$ESTIMATE" --mode fast -- python3 "$TMP/masked.py" >/dev/null 2>"$TMP/e.err" || rc=$?
expect_eq "$rc" 2 "--mode fast on an unsupported script: exit status"
expect_true "--mode fast on an unsupported script: no line naming the fix" \
    grep -q '^xmem: fast mode: unsupported: .*; use --mode exact, or --mode auto which falls back$' "$TMP/e.err"
expect_false "--mode fast on an unsupported script: a second line" \
    grep -q 'xmem: profiling the job failed' "$TMP/e.err"
echo "ok: --mode fast does not fall back, and its one line names the fix"
rc=0
"$ESTIMATE" --mode quick -- python3 x.py >/dev/null 2>"$TMP/e.err" || rc=$?
expect_eq "$rc" 2 "bad --mode: exit status"
expect_true "bad --mode: no one line" grep -q "^xmem: --mode: expected fast, exact or auto, got 'quick'$" "$TMP/e.err"
echo "ok: a bad --mode is one line and exit 2"
