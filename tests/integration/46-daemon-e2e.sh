#!/usr/bin/env bash
# End to end with the real profiler: xmemd runs the built xmem-estimate on a tiny PyTorch
# training script as a test user, answers with a signed estimate, and caches it.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
ensure_user xmemt1
# The estimator finds its launcher and capture library beside itself, so it runs from the
# build tree; the test user must be able to reach it there.
use_real_estimator xmemt1
mkdir -m 0755 "$T/w"
cat >"$T/w/tiny.py" <<'PY'
import torch
device = "cuda"
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(32, 64, device=device)
    y = torch.randint(0, 10, (32,), device=device)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
PY
chown -R xmemt1 "$T/w"
start_xmemd
# The estimate's own deadline is 300 s; the replies are what a failed check prints.
RUN_TIMEOUT=330
log_watch "$T/a" "$T/b"
run_to "$T/a" runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" --gpu A100-40GB --steps 3 \
    --deadline 300000 -- python3 tiny.py
expect_rc 0 "estimate with the real xmem-estimate"
cat "$T/a"
peak=$(kv "$T/a" peak); limit=$(kv "$T/a" limit)
expect_true "implausible estimate: peak=$peak limit=$limit" [ "$peak" -gt 0 ]
expect_true "implausible estimate: peak=$peak limit=$limit" [ "$limit" -ge "$peak" ]
# Weights + Adam state of ~19k parameters are far below 1 GiB; CUDA context is added on top.
expect_true "estimate larger than the GPU" [ "$peak" -lt $((40 << 30)) ]
expect_true "decision payload" grep -q "peak=$peak limit=$limit gpu=A100-40GB" \
    <<<"$(kv "$T/a" decision | unmunge --socket="$T/munge/sock")"
run_to "$T/b" runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" --gpu A100-40GB --steps 3 -- \
    python3 tiny.py
expect_rc 0 "second estimate"
expect_eq "$(kv "$T/b" cached)" 1 "second answer from the cache"
expect_eq "$(kv "$T/b" peak)" "$peak" "cached peak"
stop_xmemd
finish
