#!/usr/bin/env bash
# torch 2.x, exact capture: torch.amp.autocast("cuda") in bf16 and fp16 with a GradScaler
# (torch.amp.GradScaler("cuda") and the older torch.cuda.amp.GradScaler) and fused AdamW
# against the foreach default. Checks the numbers: autocast halves the Linear outputs as on
# a GPU, the scaler's state lives on the device and its scale updates as on a GPU, and the
# fused optimizer allocates no per-step temporaries where foreach allocates a parameter-sized
# set (what the CUDA kernels do).
source "$(dirname "$0")/85-capture-torch2-common.bash"

cat >"$TMP/amp.py" <<'PY'
import sys, torch, torch.nn as nn
precision, scaler_api, optimizer_kind = sys.argv[1:4]
dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[precision]
model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.LayerNorm(1024), nn.Linear(1024, 256)).cuda()
kind = {"fused": {"fused": True}, "foreach": {"foreach": True}}[optimizer_kind]
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, **kind)
growth = dict(init_scale=1024.0, growth_interval=1)
scaler = torch.amp.GradScaler("cuda", **growth) if scaler_api == "amp" else torch.cuda.amp.GradScaler(**growth)
for step in range(10):
    x = torch.randn(64, 256, device="cuda")
    opt.zero_grad(set_to_none=True)
    with torch.amp.autocast("cuda", dtype=dtype, enabled=precision != "fp32"):
        loss = model(x).float().square().mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print("scale", scaler.get_scale(), flush=True)
PY

# Largest device allocation of iteration 2 in PHASE made under a context matching PATTERN.
largest() { # TRACE PHASE PATTERN
    awk -v ph="$2" -v pat="$3" '$1=="S"{s[$2]=$3} $1=="I"{it=$2} $1=="P"{p=$2}
        $1=="A" && it==2 && p==ph && $4=="g" && s[$6] ~ pat && $3>b {b=$3} END{print b+0}' "$1"
}

for run in "fp32 amp foreach" "bf16 amp fused" "fp16 cuda fused" "bf16 amp foreach"; do
    set -- $run
    capture "$TMP/$1-$3.trace" "$TMP/amp.py" $run >"$TMP/$1-$3.out"
done

# Autocast: the first Linear's output (64 x 1024) is 2-byte under bf16 and fp16.
out32=$(largest "$TMP/fp32-foreach.trace" forward '^0[|]aten::linear>aten::addmm$')
for p in bf16 fp16; do
    t=$TMP/$p-fused.trace
    expect_true "$p run not marked amp $p" [ "$(meta "$t" amp)" = "$p" ]
    got=$(largest "$t" forward '^0[|]aten::linear>aten::addmm$')
    expect_true "$p Linear output $got B (fp32: $out32 B), want half of fp32" [ "$got" -eq $(( 64 * 1024 * 2 )) ]
    expect_true "fp32 Linear output $out32 B, want $(( 64 * 1024 * 4 ))" [ "$out32" -eq $(( 64 * 1024 * 4 )) ]
done
expect_true "autocast(cuda, float32) is not a no-op" [ "$(meta "$TMP/fp32-foreach.trace" amp)" = off ]
echo "ok: bf16 and fp16 autocast halve the Linear output ($out32 -> $(( out32 / 2 )) B)"

# GradScaler: torch's own scaler, state on the device, scale doubling each step
# (growth_interval=1, no inf): the unscale and update kernels ran on the fake device.
for p in bf16 fp16; do
    expect_true "$p: not torch's GradScaler" \
        [ "$(meta "$TMP/$p-fused.trace" grad_scaler)" = "torch (CPU kernels of the unscale and scale update)" ]
    expect_true "$p: the scale did not grow as on a GPU: $(grep '^scale' "$TMP/$p-fused.out")" \
        [ "$(grep '^scale' "$TMP/$p-fused.out" | head -2 | tr '\n' ' ')" = "scale 2048.0 scale 4096.0 " ]
done
expect_true "no 4-byte device scale/found_inf tensors" grep -Eq '^A [0-9]+ 4 g ' "$TMP/bf16-fused.trace"
echo "ok: GradScaler('cuda') and torch.cuda.amp.GradScaler update their scale on the device"

# Fused vs foreach: the foreach step allocates the sqrt of exp_avg_sq for every parameter
# (its largest is the 1024 x 256 weight), the fused kernel nothing parameter-sized.
weight=$(( 1024 * 256 * 4 ))
foreach=$(largest "$TMP/bf16-foreach.trace" optimizer 'Optimizer.step')
fused=$(largest "$TMP/bf16-fused.trace" optimizer 'Optimizer.step')
echo "largest optimizer-step allocation: foreach $foreach B, fused $fused B"
expect_true "foreach AdamW allocated no parameter-sized temporaries" [ "$foreach" -ge "$weight" ]
expect_true "fused AdamW allocated $fused B in a step (the CUDA kernel: none)" [ "$fused" -lt 1024 ]
pf=$(peak_g "$TMP/bf16-foreach.trace" 2)
pu=$(peak_g "$TMP/bf16-fused.trace" 2)
expect_true "fused peak $pu B not below foreach peak $pf B" [ "$pu" -lt "$pf" ]
echo "ok: fused AdamW peak $pu B < foreach $pf B"
