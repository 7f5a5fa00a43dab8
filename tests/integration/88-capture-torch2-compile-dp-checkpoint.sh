#!/usr/bin/env bash
# torch 2.x, exact capture: torch.compile runs eagerly with one warning line in the estimate;
# activation checkpointing (reentrant and not) runs and lowers the step's device peak as on a
# GPU; nn.DataParallel with one GPU copies a host batch to cuda:0 before the module runs
# (issue 17, class 6), so the batch is device memory.
source "$(dirname "$0")/85-capture-torch2-common.bash"

cat >"$TMP/blocks.py" <<'PY'
import sys, torch, torch.nn as nn
from torch.utils.checkpoint import checkpoint
how = sys.argv[1]
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(128, 1024), nn.GELU(), nn.Linear(1024, 128))
    def forward(self, x):
        return x + self.f(x)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(8))
    def forward(self, x):
        for block in self.blocks:
            if how in ("reentrant", "nonreentrant"):
                x = checkpoint(block, x, use_reentrant=how == "reentrant")
            else:
                x = block(x)
        return x
net = Net().cuda()
if how == "dataparallel":
    net = nn.DataParallel(net)
if how == "compile":
    net = torch.compile(net)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(256, 128, requires_grad=how == "reentrant")
    if how != "dataparallel":
        x = x.cuda()
    opt.zero_grad()
    net(x).square().mean().backward()
    opt.step()
PY

for how in plain reentrant nonreentrant dataparallel; do
    capture "$TMP/$how.trace" "$TMP/blocks.py" $how >/dev/null
done
plain=$(peak_g "$TMP/plain.trace" 2)
block_acts=$(( 256 * 1024 * 4 * 2 )) # one block's hidden activations (Linear out, GELU out)
for how in reentrant nonreentrant; do
    got=$(peak_g "$TMP/$how.trace" 2)
    echo "step device peak: plain $plain B, $how checkpointing $got B"
    expect_true "$how checkpointing saved less than 3 blocks' activations" \
        [ $(( plain - got )) -ge $(( 3 * block_acts )) ]
done

# DataParallel: the host batch (256 x 128 fp32) is copied to the device inside its forward.
batch=$(( 256 * 128 * 4 ))
awk -v b="$batch" '$1=="S"{s[$2]=$3} $1=="I"{it=$2}
    $1=="A" && it==2 && $3==b && $4=="g" && s[$6] ~ /^DataParallel\|/ {found=1} END{exit !found}' \
    "$TMP/dataparallel.trace" || fail "DataParallel did not copy the host batch to cuda:0"
expect_true "module paths lack DataParallel's module." \
    grep -q '^S [0-9]* module\.blocks\.0\.f\.0|' "$TMP/dataparallel.trace"
echo "ok: DataParallel scatters the host batch to the device"

estimate "$TMP/compile.json" --gpu A100-80GB -- python "$TMP/blocks.py" compile
expect_true "no (or more than one) torch.compile warning: $(json "$TMP/compile.json" "j['warnings']")" \
    [ "$(json "$TMP/compile.json" "sum('torch.compile ran eagerly' in w for w in j['warnings'])")" = 1 ]
expect_true "compile warning not on stderr" \
    grep -q 'xmem: warning: torch.compile ran eagerly' "$TMP/estimate.err"
echo "ok: torch.compile estimated as eager, with one warning"
