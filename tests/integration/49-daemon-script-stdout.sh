#!/usr/bin/env bash
# A script that prints must not write into the channel the estimate comes back on: its
# stdout goes to stderr, for `xmem estimate --json` on the command line and for xmemd, which
# parses the estimator's stdout. Before, print("starting") gave outcome 17 (bad output), and
# a script could print a JSON object of its choosing for the root daemon to trust.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
ensure_user xmemt1
use_real_estimator xmemt1
mkdir -m 0755 "$T/w"
cat >"$T/w/loud.py" <<'PY'
import sys, torch
print("starting")
print('{"peak_bytes": 1, "limit_bytes": 1, "fits": true, "gpu": "A100-40GB", "torch": "2.1"}')
model = torch.nn.Linear(64, 10).to("cuda")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(8, 64, device="cuda")).sum()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.3f}", flush=True)
PY
chown -R xmemt1 "$T/w"

log "xmem estimate --json on the command line"
(cd "$T/w" && runuser -u xmemt1 -- "$B/xmem-estimate" --mode exact --json -- python3 loud.py) \
    >"$T/cli.out" 2>"$T/cli.err" || fail "xmem estimate of a printing script: $(cat "$T/cli.err")"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["peak_bytes"] > 1, d' "$T/cli.out" \
    || fail "--json output is not one JSON object with the real estimate: $(cat "$T/cli.out")"
expect_true "the script's own output is not on stderr" grep -q '^starting$' "$T/cli.err"

log "through xmemd"
start_xmemd
runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" --deadline 300000 -- python3 loud.py >"$T/a" \
    || fail "estimate of a printing script through xmemd: $(cat "$T/a")"
expect_eq "$(kv "$T/a" outcome)" 0 "outcome"
expect_true "the script's printed JSON was taken for the estimate" [ "$(kv "$T/a" peak)" -gt 1 ]
stop_xmemd
echo "ok: a script's stdout never reaches the estimate's channel"
