#!/usr/bin/env bash
# Steps without torch.optim (issue 17, class 4): a loop in the style of pytorch/examples'
# word_language_model updates its LSTM's parameters by hand (p.data.add_(p.grad, alpha=-lr)).
# With no torch.optim optimizer built, each backward and the update after it make a step,
# and the estimate says so in one warning line; torch.cuda.nvtx.mark("xmem.step") marks
# steps explicitly. The exact capture runs the venv's torch 2.x; the fast capture, which
# shares the step rule, runs here on the system torch 1.13.
source "$(dirname "$0")/85-capture-torch2-common.bash"

cat >"$TMP/wordlm.py" <<'PY'
import sys, torch, torch.nn as nn
device = torch.device("cuda")
rnn = nn.LSTM(32, 64).to(device)
decoder = nn.Linear(64, 100).to(device)
params = list(rnn.parameters()) + list(decoder.parameters())
lr, hidden = 0.1, None
for batch in range(1000):
    data = torch.randn(20, 8, 32, device=device)
    targets = torch.randint(0, 100, (20 * 8,), device=device)
    hidden = None if hidden is None else tuple(h.detach() for h in hidden)
    rnn.zero_grad()
    decoder.zero_grad()
    output, hidden = rnn(data, hidden)
    loss = nn.functional.cross_entropy(decoder(output).view(-1, 100), targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 0.25)
    for p in params:
        p.data.add_(p.grad, alpha=-lr)
    if "--marker" in sys.argv:
        torch.cuda.nvtx.mark("xmem.step")
PY

estimate "$TMP/exact.json" --gpu A100-80GB --timeout 60 -- python "$TMP/wordlm.py"
expect_true "exact: 3 steps not found" [ "$(json "$TMP/exact.json" "j['iterations']")" = 3 ]
expect_true "exact: no warning that steps were counted at backward: $(json "$TMP/exact.json" "j['warnings']")" \
    [ "$(json "$TMP/exact.json" "sum('no torch.optim optimizer' in w for w in j['warnings'])")" = 1 ]
echo "ok: exact capture found 3 manual-update steps and said how"

capture "$TMP/marker.trace" "$TMP/wordlm.py" --marker >/dev/null
expect_true "the xmem.step marker did not count steps" [ "$(meta "$TMP/marker.trace" step_rule)" = marker ]
expect_true "marker: 3 steps not captured" [ "$(meta "$TMP/marker.trace" steps)" = 3 ]
expect_true "marker run still warns" [ -z "$(meta "$TMP/marker.trace" warning_steps)" ]
# The update after backward is the optimizer phase: clip_grad_norm_'s norms allocate there.
expect_true "no optimizer phase for the manual update" grep -q '^P optimizer$' "$TMP/marker.trace"
echo "ok: torch.cuda.nvtx.mark('xmem.step') counts steps, without a warning"

if [ -x "$XMEM_BUILD/bin/xmem-profile-fast" ] && $PY -c 'import torch' 2>/dev/null; then
    profile "$XMEM_BUILD/bin/xmem-profile-fast" "$PY" "$TMP/fast.trace" "$TMP/wordlm.py" >/dev/null
    expect_eq "$(meta "$TMP/fast.trace" steps)" 3 "fast: manual-update steps not found"
    expect_eq "$(meta "$TMP/fast.trace" step_rule)" backward "fast: the step rule"
    expect_true "fast: no steps warning" [ -n "$(meta "$TMP/fast.trace" warning_steps)" ]
    echo "ok: the fast capture finds the same steps"
fi

# A memory-profiling script of the CS336 kind (issue 33, item 7): one forward and one
# backward(), no optimizer, started through a runner that closes the descriptors it inherits
# (the capture's status pipe among them). The estimate takes the one step the trace records.
cat >"$TMP/forward_backward.py" <<'PY'
import torch, torch.nn as nn
model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)).cuda()
loss = model(torch.randn(64, 256, device="cuda")).pow(2).mean()
loss.backward()
torch.cuda.synchronize()
print("max allocated", torch.cuda.max_memory_allocated())
PY
cat >"$TMP/closing_runner.sh" <<'SH'
#!/bin/bash
# Starts its command with no descriptors beyond stdin, stdout and stderr.
for fd in /proc/$$/fd/*; do
    fd=${fd##*/}
    [ "$fd" -gt 2 ] && eval "exec $fd>&-"
done
exec "$@"
SH
chmod +x "$TMP/closing_runner.sh"
estimate "$TMP/fb.json" --gpu A100-80GB --keep-trace "$TMP/fb.trace" -- \
    "$TMP/closing_runner.sh" "$VPY" "$TMP/forward_backward.py"
expect_eq "$(json "$TMP/fb.json" "j['steps']")" 1 "forward-backward: the steps estimated"
expect_eq "$(meta "$TMP/fb.trace" step_rule)" backward "forward-backward: the step rule"
expect_true "forward-backward: no gradients in the estimate" \
    [ "$(json "$TMP/fb.json" "j['breakdown']['gradients']")" -gt 0 ]
echo "ok: a forward-backward script without an optimizer is estimated from its one step"
