#!/usr/bin/env bash
# A sweep imports torch once (issue 30; docs/estimate.md, "What a sweep costs"): in fast
# mode the values' jobs are forked by one zygote that imported torch, each still under its
# own xmem-profile. Each value's peak equals its single estimate's, byte for byte; a value the
# script refuses, and one that never steps within --budget, are named while the others go
# on, and no job is left behind. A zygote with a second thread after `import torch` (here a
# sitecustomize's) must not fork: the sweep says so in one line and starts one Python per
# value, with the same peaks.
source "$(dirname "$0")/80-torch2-common.bash"
B=${XMEM_BUILD:?}/bin
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TMPDIR=$TMP # the zygote's socket, so that its command line names this test
cat >"$TMP/mlp.py" <<'PY'
import argparse
import time
import torch
p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, default=32)
a = p.parse_args()
if a.batch_size == 2:
    time.sleep(3600)  # never steps: the launcher's budget ends it
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(a.batch_size, 1024, device="cuda")
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
PY
mkdir "$TMP/threaded"
cat >"$TMP/threaded/sitecustomize.py" <<'PY'
import threading
import time
threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
PY
cd "$TMP" || exit 1
export PATH="$venv/bin:$PATH"
keep_going
est=("$B/xmem-estimate" --gpu A100-40GB --mode fast)
for b in 256 4096; do
    run_to "$TMP/$b.json" "${est[@]}" --json -- python mlp.py --batch-size "$b"
    expect_rc 0 "the single estimate of batch $b" || finish
done
# same_peaks SWEEP_JSON HOW INDEX...: those points' peaks equal their single estimates'.
same_peaks() {
    local sweep=$1 how=$2 i b
    shift 2
    for i in "$@"; do
        b=$(json "$sweep" "j['points'][$i]['value']")
        expect_eq "$(json "$sweep" "j['points'][$i]['peak_bytes']")" \
            "$(json "$TMP/$b.json" "j['peak_bytes']")" "batch $b's $how peak against its single estimate"
    done
}

run_to "$TMP/fork.json" "${est[@]}" --json --budget 10 --sweep --batch-size=256,x,2,4096 -- python mlp.py
expect_rc 0 "the forked sweep" || finish
expect_no_out "--sweep" "the forked sweep fell back"
expect_json "$TMP/fork.json" "j['forked']" "the values ran in the zygote's children"
same_peaks "$TMP/fork.json" "forked" 0 3
expect_json "$TMP/fork.json" "\"invalid int value: 'x'\" in j['points'][1]['error']" \
    "the refused value is named with the script's reason"
expect_json "$TMP/fork.json" "'no optimizer step within' in j['points'][2]['error']" \
    "the value that never steps is stopped by its own launcher's budget"
sleep 1
expect_false "the zygote, or a job it forked, is still running" pgrep -f "xmem_fast.zygote $TMP"
expect_false "a job of the sweep is still running" pgrep -u "$(id -u)" -f "^python mlp.py"

PYTHONPATH=$TMP/threaded run_to "$TMP/fallback.json" "${est[@]}" --json --sweep --batch-size=256,4096 -- \
    python mlp.py
expect_rc 0 "the sweep whose zygote has two threads" || finish
expect_eq "$(grep -c -- '--sweep' <<<"$RUN_OUT")" 1 "one line about the fallback"
expect_out "^xmem: --sweep: the zygote cannot fork: 2 threads after .import torch.*one estimate per value" \
    "the fallback says why"
expect_json "$TMP/fallback.json" "not j['forked']" "no value forked from a zygote with threads"
same_peaks "$TMP/fallback.json" "unforked" 0 1
finish
