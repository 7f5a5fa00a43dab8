#!/usr/bin/env bash
# Issue 34: dropout in training on a GPU runs native_dropout, which keeps a 1-byte bool mask
# (xmem_gpu/dropout.py); a CPU or meta tensor takes _dropout_impl, whose mask has the input's
# dtype (4 bytes an element in fp32). Both captures, on nn.Dropout and F.dropout, in fp32 and
# under autocast bf16, with p=0 and eval calls beside (no mask): each step's trace holds two
# masks of numel bytes, and the two captures' peak live device bytes agree. Before the rule
# both traces held the fp32 mask: 100,036,008 bytes peak instead of 82,030,008 here. With
# nn.Dropout inside non-reentrant checkpointing, whose recompute runs in backward where the
# captures' torch function modes are off, a third mask a step: the recompute's (the
# rebound F.dropout; without it the recompute kept a float mask and checkpointing failed
# on the saved tensors' metadata, as on test 96's Llama LoRA). Each mask is allocated just
# before its output, as the CUDA kernel allocates them.
source "$(dirname "$0")/90-fast-torch2-common.bash"
PROFILE=$XMEM_BUILD/bin/xmem-profile
script=$TMP/dropout.py
cat >"$script" <<'PY'
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F

from torch.utils.checkpoint import checkpoint

amp = "--amp" in sys.argv
ckpt = "--ckpt" in sys.argv
lin = nn.Linear(1000, 1000).cuda()
drop = nn.Dropout(0.1)
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
x = torch.randn(3001, 1000).cuda()  # 3,001,000 elements: a bool mask of 3,001,000 bytes
for _ in range(3):
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        h = lin(x)
        y = checkpoint(drop, h, use_reentrant=False) if ckpt else drop(h)  # nn.Dropout: a mask
        z = F.dropout(y, 0.2, training=True)  # F.dropout: a mask
        z = F.dropout(z, 0.0) + F.dropout(z, 0.3, training=False)  # p=0, eval: no mask
    z.float().sum().backward()
    opt.step()
    opt.zero_grad()
PY
"$PROFILE" --python "$VPY" --out "$TMP/probe.trace" --steps 1 -- python "$script" >"$TMP/out" 2>&1 ||
    { echo "the exact capture does not run on $VPY's torch here: $(tail -n 1 "$TMP/out")"; exit 77; }
for variant in fp32 amp ckpt; do
    args=""; [ $variant != fp32 ] && args=--$variant
    for mode in exact fast; do
        capture=$PROFILE; [ $mode = fast ] && capture=$FAST
        XMEM_GPU_CAPABILITY=8.0 "$capture" --python "$VPY" --out "$TMP/$mode-$variant.trace" \
            --steps 3 --timeout 120 -- python "$script" $args >"$TMP/out" 2>&1 || fail "$mode capture of $variant"
    done
    expect_true "$variant: dropout masks or peaks" \
        "$VPY" - "$TMP" "$variant" "$XMEM_SRC/daemon/profiler/python" <<'PY'
import sys
tmp, variant, pydir = sys.argv[1:]
sys.path.insert(0, pydir)
import xmem_trace

NUMEL = 3001 * 1000
bad = False
peaks = {}
for mode in ("exact", "fast"):
    masks, live, now, peak = {}, {}, 0, 0
    step, previous, order = 0, (0, None), []
    for _, kind, parts in xmem_trace.records(f"{tmp}/{mode}-{variant}.trace"):
        if kind == "I":
            step = int(parts[0])
        elif kind == "A" and parts[2] == "g":
            size = int(parts[1])
            if previous[0] == NUMEL:  # what follows a mask: the same call's output
                order.append(size in (2 * NUMEL, 4 * NUMEL) and parts[4] == previous[1])
            previous = (size, parts[4])
            live[parts[0]] = size
            now += size
            peak = max(peak, now)
            if size == NUMEL:
                masks[step] = masks.get(step, 0) + 1
        elif kind == "F" and parts[0] in live:
            now -= live.pop(parts[0])
    peaks[mode] = peak
    if not all(order):
        bad = True
        print(f"FAIL: {variant} {mode}: a mask not followed by its output: {order}")
    want = 3 if variant == "ckpt" else 2
    if masks != {1: want, 2: want, 3: want}:
        bad = True
        print(f"FAIL: {variant} {mode}: masks of {NUMEL} bytes per step: {masks}, "
              f"want {want} a step (nn.Dropout, F.dropout, the recompute)")
    else:
        print(f"ok: {variant} {mode}: {want} {NUMEL}-byte masks a step, peak {peak}")
exact, fast = peaks["exact"], peaks["fast"]
if abs(fast - exact) > 0.01 * exact:
    bad = True
    print(f"FAIL: {variant}: trace peaks differ: exact {exact}, fast {fast}")
sys.exit(1 if bad else 0)
PY
done
echo "all checks passed"
