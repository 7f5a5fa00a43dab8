#!/usr/bin/env bash
# Issue 34 class 2: backward formulas that fill a fresh zeros tensor (gather, max along a dim,
# x[idx], index_select, topk) write into it in place on a GPU; under any dispatch mode ATen
# calls every tensor subclass-like and they allocate an out-of-place copy instead. Fast mode
# runs them in place as without a mode (xmem_fast/formulas.py), so its trace's peak live
# device bytes equal the exact capture's for each. Before: +9.0 % with all five at once
# (49,702,536 against 45,602,440 bytes).
source "$(dirname "$0")/90-fast-torch2-common.bash"
PROFILE=$XMEM_BUILD/bin/xmem-profile
# Every formula formulas.py names, on this torch: under a dispatch mode that applies it, the
# backward runs no out-of-place twin (a wrong node name would leave one).
"$VPY" - "$XMEM_SRC/daemon/profiler" <<'PY' || exit 1
import sys
sys.path[:0] = [sys.argv[1] + "/python", sys.argv[1] + "/fast/python"]
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from xmem_fast import formulas
from xmem_fast.shape_kernels import KERNELS  # masked_select's, as the tracker runs it

class Apply(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in formulas._TWINS and formulas.in_place(func) is func:
            self.left.append(str(func))
        func = formulas.in_place(func)
        return KERNELS.get(func, func)(*args, **(kwargs or {}))

idx = torch.zeros(4, 8, dtype=torch.long, device="meta")
rows = torch.zeros(2, dtype=torch.long, device="meta")
cases = {
    "gather": lambda a: a.gather(1, idx), "take_along_dim": lambda a: a.take_along_dim(idx, 1),
    "cummax": lambda a: a.cummax(1).values, "cummin": lambda a: a.cummin(1).values,
    "max": lambda a: a.max(1).values, "min": lambda a: a.min(1).values,
    "kthvalue": lambda a: a.kthvalue(2, 1).values, "median": lambda a: a.median(1).values,
    "nanmedian": lambda a: a.nanmedian(1).values, "mode": lambda a: a.mode(1).values,
    "topk": lambda a: a.topk(3, 1).values, "sort": lambda a: a.sort(1).values,
    "index": lambda a: a[rows], "index_select": lambda a: a.index_select(0, rows),
    "masked_select": lambda a: a.masked_select(torch.ones(4, 8, dtype=torch.bool, device="meta")),
}
bad = []
for name, f in cases.items():
    mode = Apply()
    mode.left = []
    with mode:
        f(torch.empty(4, 8, device="meta", requires_grad=True)).sum().backward()
    if mode.left:
        bad.append(f"{name}: {mode.left}")
print("FAILED: out of place still: " + "; ".join(bad) if bad else
      f"ok: {len(cases)} formulas fill their zeros in place")
sys.exit(1 if bad else 0)
PY
script=$TMP/formulas.py
cat >"$script" <<'PY'
import sys
import torch

which = sys.argv[1]
B, V = 512, 4000
lin = torch.nn.Linear(256, V).cuda()
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
x = torch.randn(B, 256).cuda()
target = torch.randint(0, V, (B, 1)).cuda()
rows = torch.randint(0, B, (B // 2,)).cuda()
for _ in range(2):
    logits = lin(x)  # B x V: each formula's zeros are this size
    if which == "gather":
        loss = -logits.log_softmax(1).gather(1, target).mean()  # GatherBackward0
    elif which == "max":
        loss = logits.max(1).values.mean()                      # MaxBackward0
    elif which == "index":
        loss = logits[rows].mean()                              # IndexBackward0
    elif which == "index_select":
        loss = logits.index_select(0, rows).mean()              # IndexSelectBackward0
    elif which == "topk":
        loss = logits.topk(5, 1).values.mean()                  # TopkBackward0
    loss.backward()
    opt.step()
    opt.zero_grad()
PY
"$PROFILE" --python "$VPY" --out "$TMP/probe.trace" --steps 1 -- python "$script" max >"$TMP/out" 2>&1 ||
    { echo "the exact capture does not run on $VPY's torch here: $(tail -n 1 "$TMP/out")"; exit 77; }
bad=0
for which in gather max index index_select topk; do
    for mode in exact fast; do
        capture=$PROFILE; [ $mode = fast ] && capture=$FAST
        XMEM_GPU_CAPABILITY=8.0 "$capture" --python "$VPY" --out "$TMP/$mode-$which.trace" \
            --steps 2 --timeout 120 -- python "$script" "$which" >"$TMP/out" 2>&1 ||
            { echo "FAILED: $mode capture of $which:"; tail -20 "$TMP/out"; exit 1; }
        "$VPY" "$WORKLOADS/trace_stats.py" "$TMP/$mode-$which.trace" >"$TMP/$mode-$which.stats"
    done
    "$VPY" - "$TMP" "$which" <<'PY' || bad=1
import json, sys
tmp, which = sys.argv[1:]
exact, fast = (json.load(open(f"{tmp}/{mode}-{which}.stats"))["peak"] for mode in ("exact", "fast"))
ok = fast == exact
print(f"{'ok' if ok else 'FAILED'}: {which}: trace peak exact {exact}, fast {fast} "
      f"({100 * (fast - exact) / exact:+.3f} %)")
sys.exit(0 if ok else 1)
PY
done
[ $bad = 0 ] || exit 1
echo "all checks passed"
