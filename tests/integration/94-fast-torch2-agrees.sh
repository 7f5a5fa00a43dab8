#!/usr/bin/env bash
# Issue 16 part 3: on torch 2.x, fast mode (meta tensors with the GPU's paths) and the exact
# capture (the job run for real on the CPU) agree within 1 % on an MLP (AdamW, foreach), a
# CNN (batch norm, SGD momentum), a small attention LM under AMP bf16 and a KV-cache-style
# torch.cat onto an empty device tensor (Hugging Face's DynamicLayer; the exact capture once
# put the result on the host, 2.7 % under fast mode on GPT-2) and pytorch/examples' LSTM
# language model (the exact capture once ran oneDNN's LSTM, -6.2 %) and a gradient join (two
# branches' gradients summed by the autograd engine, in place on torch 2.x; fast mode's own
# dispatch mode once made the engine allocate the sum, +23.5 % trace peak), backward
# formulas that fill fresh zeros (gather, max along a dim, x[idx], index_select, topk: fast
# mode's dispatch mode once sent them down their out-of-place branch, +9.0 % trace peak;
# xmem_fast/formulas.py) and a bf16 inference loop under torch.inference_mode() (torch 2.14
# caches no autocast weight cast there; fast mode once did, +40.9 %) and a storage resized
# to 0 and back (FSDP2's resharding: fast mode once kept the block, +36 %, and the exact
# capture put the block the resize made back on the host, -12 %): the traces' peak
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
# Every formula xmem_fast/formulas.py names, on this torch: under a dispatch mode that
# applies it, the backward runs no out-of-place twin (a wrong node name would leave one).
expect_true "a formula leaves an out-of-place twin" "$VPY" - "$XMEM_SRC/daemon/profiler" <<'PY'
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
print("FAIL: out of place still: " + "; ".join(bad) if bad else
      f"ok: {len(cases)} formulas fill their zeros in place")
sys.exit(1 if bad else 0)
PY
# formulas: each formula's zeros are logits-sized (B x V).
cat >"$TMP/formulas.py" <<'PY'
import torch
B, V = 512, 4000
lin = torch.nn.Linear(256, V).cuda()
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
x = torch.randn(B, 256).cuda()
target = torch.randint(0, V, (B, 1)).cuda()
rows = torch.randint(0, B, (B // 2,)).cuda()
for _ in range(4):
    logits = lin(x)
    loss = (-logits.log_softmax(1).gather(1, target).mean()  # GatherBackward0
            + logits.max(1).values.mean()                    # MaxBackward0
            + logits[rows].mean()                            # IndexBackward0
            + logits.index_select(0, rows).mean()            # IndexSelectBackward0
            + logits.topk(5, 1).values.mean())               # TopkBackward0
    loss.backward()
    opt.step()
    opt.zero_grad()
PY
# resize: a 64 MiB storage resized to 0 while 96 MiB come and go, then back, with 48 MiB
# more: the peak is the second, with the block the resize allocated.
cat >"$TMP/resize.py" <<'PY'
import torch
lin = torch.nn.Linear(1024, 1024).cuda()
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
x = torch.randn(2048, 1024).cuda()
storage = torch.empty(16 << 20, device="cuda").untyped_storage()  # an unsharded parameter
for _ in range(4):
    storage.resize_(0)  # FSDP2's free_storage: resharded
    y = lin(x)
    with torch.no_grad():
        del_me = y.repeat(12, 1)
        del del_me
    storage.resize_(64 << 20)  # alloc_storage: gathered again
    with torch.no_grad():
        del_me = y.repeat(6, 1)
        del del_me
    y.sum().backward()
    opt.step()
    opt.zero_grad()
PY
# infer: a step is an NVTX mark (no optimizer).
cat >"$TMP/infer.py" <<'PY'
import torch
model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda()
x = torch.randn(64, 2048).cuda()
for _ in range(4):
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        y = model(x)
    del y
    torch.cuda.nvtx.mark("xmem.step")
PY
declare -A command=([mlp]="$WORKLOADS/small_nets.py mlp" [cnn]="$WORKLOADS/small_nets.py cnn"
                    [attention]="$WORKLOADS/attention.py --amp bf16 --move cuda"
                    [kvcache]="$TMP/kvcache.py" [lstm]="$WORKLOADS/torch2/word_lm.py"
                    [join]="$TMP/join.py" [formulas]="$TMP/formulas.py" [infer]="$TMP/infer.py"
                    [resize]="$TMP/resize.py")
for arch in mlp cnn attention kvcache lstm join formulas infer resize; do
    for mode in exact fast; do
        capture=$PROFILE; [ $mode = fast ] && capture=$FAST
        XMEM_GPU_CAPABILITY=8.0 "$capture" --python "$VPY" --out "$TMP/$mode-$arch.trace" \
            --steps 3 --timeout 120 -- python ${command[$arch]} >"$TMP/out" 2>&1 || fail "$mode capture of $arch"
    done
    for mode in exact fast; do
        "$VPY" "$WORKLOADS/trace_stats.py" "$TMP/$mode-$arch.trace" >"$TMP/$mode-$arch.stats"
        "$ESTIMATE" --catalog "$XMEM_SRC/etc/gpus.yaml" --json --gpu H100-80GB \
            --trace-in "$TMP/$mode-$arch.trace" >"$TMP/$mode-$arch.json" 2>"$TMP/err" ||
            fail "xmem-estimate on the $mode trace of $arch"
    done
    expect_true "$arch: fast and exact agree" "$VPY" - "$arch" "$TMP" <<'PY'
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
    print(f"{'ok' if ok else 'FAIL'}: {arch} {what}: exact {exact}, fast {fast} "
          f"({100 * (fast - exact) / exact:+.3f} %)")
# What a CPU kernel allocates for itself is no GPU memory: the CPU flash attention kernel's
# per-thread buffers, hundreds a step, once fragmented the small pool (xmem_capture/sdpa.py).
cpu_kernel = [op for op in load("exact", "stats")["ops"]
              if "for_cpu" in op.lower() or "forcpu" in op.lower()]
if cpu_kernel:
    bad = True
    print(f"FAIL: {arch}: the exact trace has device storages of CPU kernels: {cpu_kernel}")
# Recurrent layers: both captures run ATen's cells and say the cuDNN reserve is unmeasured
# (xmem_gpu/rnn.py); only where one ran.
for mode in ("exact", "fast"):
    said = any("nn.LSTM/GRU/RNN" in w for w in load(mode, "json")["warnings"])
    if said != (arch == "lstm"):
        bad = True
        print(f"FAIL: {arch}: the {mode} estimate's recurrent-layer warning: {said}")
sys.exit(1 if bad else 0)
PY
done
echo "all checks passed"
