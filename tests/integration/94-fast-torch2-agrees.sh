#!/usr/bin/env bash
# Issue 16 part 3: on torch 2.x, fast mode (meta tensors with the GPU's paths) and the exact
# capture (the job run for real on the CPU) agree within 1 % on an MLP (AdamW, foreach), a
# CNN (batch norm, SGD momentum), a small attention LM under AMP bf16 and a KV-cache-style
# torch.cat onto an empty device tensor (Hugging Face's DynamicLayer; the exact capture once
# put the result on the host, 2.7 % under fast mode on GPT-2) and pytorch/examples' LSTM
# language model (the exact capture once ran oneDNN's LSTM, -6.2 %) and a gradient join (two
# branches' gradients summed by the autograd engine, in place on torch 2.x; fast mode's own
# dispatch mode once made the engine allocate the sum, +23.5 % trace peak): the traces' peak
# live device bytes and xmem-estimate's allocated and reserved peaks. Needs the exact capture library for the venv's torch
# (XMEM_CAPTURE_LIB, or built by the exact capture on first use); skips without it.
source "$(dirname "$0")/90-fast-torch2-common.bash"
PROFILE=$XMEM_BUILD/bin/xmem-profile
ESTIMATE=$XMEM_BUILD/bin/xmem-estimate
probe=$TMP/probe.py
cat >"$probe" <<'PY'
import torch
m = torch.nn.Linear(2, 2).cuda()
o = torch.optim.SGD(m.parameters(), lr=0.1)
m(torch.ones(1, 2).cuda()).sum().backward()
o.step()
PY
"$PROFILE" --python "$VPY" --out "$TMP/probe.trace" --steps 1 -- python "$probe" >"$TMP/out" 2>&1 ||
    { echo "the exact capture does not run on $VPY's torch here: $(tail -n 1 "$TMP/out")"; exit 77; }
# attention: the SDPA workload under AMP bf16 (flash on sm80 in both captures, through the one
# chooser). It moves the model with .cuda() then .to(dtype): the exact capture (shim) kept
# parameters on the host for model.to(device=..., dtype=...) when this was written.
# kvcache: the cat's result is a device tensor on a GPU, saved for backward: a third of the peak.
cat >"$TMP/kvcache.py" <<'PY'
import torch
lin = torch.nn.Linear(512, 1024).cuda()
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
x = torch.randn(256, 512).cuda()
for _ in range(4):
    cache = torch.tensor([], device="cuda")  # how HF's DynamicLayer starts, then grows by cat
    k = torch.cat([cache, lin(x)], dim=0)
    (k * k).sum().backward()
    opt.step()
    opt.zero_grad()
PY
cat >"$TMP/join.py" <<'PY'
import torch
lin = torch.nn.Linear(1024, 1024).cuda()
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
x = torch.randn(4096, 1024).cuda()
for _ in range(4):
    y = lin(x)
    ((y * 2).sum() + (y * 3).sum()).backward()  # y's two gradients meet in the engine
    opt.step()
    opt.zero_grad()
PY
declare -A command=([mlp]="$WORKLOADS/small_nets.py mlp" [cnn]="$WORKLOADS/small_nets.py cnn"
                    [attention]="$WORKLOADS/attention.py --amp bf16 --move cuda"
                    [kvcache]="$TMP/kvcache.py" [lstm]="$WORKLOADS/torch2/word_lm.py"
                    [join]="$TMP/join.py")
for arch in mlp cnn attention kvcache lstm join; do
    for mode in exact fast; do
        capture=$PROFILE; [ $mode = fast ] && capture=$FAST
        XMEM_GPU_CAPABILITY=8.0 "$capture" --python "$VPY" --out "$TMP/$mode-$arch.trace" \
            --steps 3 --timeout 120 -- python ${command[$arch]} >"$TMP/out" 2>&1 ||
            { echo "FAILED: $mode capture of $arch:"; tail -20 "$TMP/out"; exit 1; }
    done
    for mode in exact fast; do
        "$VPY" "$WORKLOADS/trace_stats.py" "$TMP/$mode-$arch.trace" >"$TMP/$mode-$arch.stats"
        "$ESTIMATE" --catalog "$XMEM_SRC/etc/gpus.yaml" --json --gpu H100-80GB \
            --trace-in "$TMP/$mode-$arch.trace" >"$TMP/$mode-$arch.json" 2>"$TMP/err" ||
            { echo "FAILED: xmem-estimate on the $mode trace of $arch:"; cat "$TMP/err"; exit 1; }
    done
    "$VPY" - "$arch" "$TMP" <<'PY' || exit 1
import json, sys
arch, tmp = sys.argv[1:]
load = lambda mode, ext: json.load(open(f"{tmp}/{mode}-{arch}.{ext}"))
pairs = [("trace peak", load("exact", "stats")["peak"], load("fast", "stats")["peak"])]
for key in ("allocated_peak_bytes", "reserved_peak_bytes"):
    pairs.append((key, load("exact", "json")[key], load("fast", "json")[key]))
# Issue 16's target: reserved within 1 %. Reserved bytes move in whole segments (2 MiB and
# up, about 2 % of these runs), so this holds only where both traces pack the allocator's
# pools alike: the exact capture once recorded oneDNN's bf16 GEMM scratch as device memory,
# a 2 MiB segment more on the attention LM (-1.887 %).
bad = False
for what, exact, fast in pairs:
    ok = abs(fast - exact) <= 0.01 * exact
    bad |= not ok
    print(f"{'ok' if ok else 'FAILED'}: {arch} {what}: exact {exact}, fast {fast} "
          f"({100 * (fast - exact) / exact:+.3f} %)")
# What a CPU kernel allocates for itself is no GPU memory: the CPU flash attention kernel's
# per-thread buffers, hundreds a step, once fragmented the small pool (xmem_capture/sdpa.py).
cpu_kernel = [op for op in load("exact", "stats")["ops"]
              if "for_cpu" in op.lower() or "forcpu" in op.lower()]
if cpu_kernel:
    bad = True
    print(f"FAILED: {arch}: the exact trace has device storages of CPU kernels: {cpu_kernel}")
# Recurrent layers: both captures run ATen's cells and say the cuDNN reserve is unmeasured
# (xmem_gpu/rnn.py); only where one ran.
for mode in ("exact", "fast"):
    said = any("nn.LSTM/GRU/RNN" in w for w in load(mode, "json")["warnings"])
    if said != (arch == "lstm"):
        bad = True
        print(f"FAILED: {arch}: the {mode} estimate's recurrent-layer warning: {said}")
sys.exit(1 if bad else 0)
PY
done
echo "all checks passed"
