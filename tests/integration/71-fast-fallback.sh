#!/usr/bin/env bash
# What fake tensors cannot answer (docs/fast-mode.md): data-dependent shapes and Python control
# flow on GPU values make xmem-profile-fast exit 3 with one `xmem: fast mode: unsupported:`
# line and no trace; values read for logging (.item(), f-strings, .cpu()) get placeholders
# and the capture succeeds; bad usage keeps xmem-profile's exit 2.
source "$(dirname "$0")/70-fast-common.bash"

# script NAME BODY: a training loop on a small model whose step body ends with BODY.
script() {
    cat >"$TMP/$1.py" <<PY
import torch
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(8, 16).cuda()
    y = torch.randint(4, (8,), device="cuda")
    out = model(x)
    loss = torch.nn.functional.cross_entropy(out, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
$2
PY
}

expect_unsupported() {
    local name=$1 why=$2 rc=0
    "$FAST" --out "$TMP/$name.trace" -- python3 "$TMP/$name.py" >"$TMP/out" 2>&1 || rc=$?
    expect_eq "$rc" 3 "$name: exit status"
    expect_true "$name: no unsupported line naming '$why'" grep -q "^xmem: fast mode: unsupported: .*$why" "$TMP/out"
    expect_true "$name: a trace was left behind" [ ! -e "$TMP/$name.trace" ]
    echo "ok: $name falls back: $(grep '^xmem: fast mode' "$TMP/out")"
}

script nonzero '    idx = (out > 0).nonzero()'
expect_unsupported nonzero "aten::nonzero"
script mask '    picked = out[out > 0]'
expect_unsupported mask "aten::nonzero\|aten::index"
script unique '    classes = torch.unique(y)'
expect_unsupported unique "unique"
script control '    if loss > 100:
        break'
expect_unsupported control "bool()"
script save '    torch.save(model.state_dict(), "'"$TMP"'/ckpt.pt")'
expect_unsupported save "torch.save of GPU tensors"

script logging '    print(f"step {step} loss {loss.item():.3f} {loss:.2f} {out.sum()}", out.cpu().shape,
          out.tolist()[0][:1], float(loss), torch.cuda.memory_allocated() > 0)
    torch.cuda.synchronize()'
fast_capture "$TMP/logging.trace" -- python3 "$TMP/logging.py" >"$TMP/logging.out"
log_watch "$TMP/logging.out"
expect_true "placeholder values" \
    grep -q '^step 0 loss 0.000 0.00 .* torch.Size(\[8, 4\]) \[0.0\] 0.0 True$' "$TMP/logging.out"
run_ok $CHECK "$TMP/logging.trace" --steps 3 >/dev/null
echo "ok: logging gets placeholders: $(head -1 "$TMP/logging.out")"

rc=0
"$FAST" --out 2>/dev/null || rc=$?
expect_true "bad usage exits $rc, not 2" [ "$rc" -eq 2 ]
echo "ok: bad usage exits 2"
