#!/usr/bin/env bash
# Issue 34, classes K7, K8, K2, K5, K10 and K6 (docs/cuda-semantics.md): ops whose CUDA kernels allocate
# what the CPU and Meta kernels do not, under both captures (tests/workloads/cuda_kernels.py):
#   bmm    `bmm(a, b).sum()`: sum's gradient reaches BmmBackward0 expanded (stride 0), and
#          cuBLAS copies it whole, B·m·n·e, for each of the two products
#          (prepare_batch_matrix_for_cublas): the exact capture's analysis merges the CPU's
#          per-slice copies into that copy; fast mode made none (xmem_gpu/gemm.py);
#   index  `table[rows]`'s backward, index_put_ with accumulate, sorts on a GPU: int64
#          remainder, linear, sorted and original indices, arange and cub's storage, 8·N
#          bytes each (16·N for cub); neither capture had them (xmem_gpu/index_put.py);
#   bce    binary_cross_entropy_with_logits with weight and pos_weight, and a masked_fill of a
#          learned value: fast mode ran their formulas' out-of-place branches (formulas.py);
#   bias   a Linear's bias gradient (sum over 1024 rows of [1024, 256]) on an A100 (108
#          multiprocessors): gpu_reduce_kernel splits it across 16 blocks a column and stages
#          2 MiB and 8 B of semaphores, after the output, in both captures (xmem_gpu/reduce.py);
#   einsum `einsum(eq, x * 2, weight)` under bf16 autocast: CUDA casts einsum's operand list
#          first to last, the activation (64 KiB) before the weight (256 KiB); both captures
#          cast the weight first before (autocast.py, cuda_autocast.py);
#   sdpa   fp32 attention (4 x 8 heads x 128 x 64) that an A100 runs memory-efficient: its
#          backward copies the expanded output gradient (1 MiB), makes fp32 dO * O (1 MiB),
#          its row sums and delta (16 KiB each) and the kernel's dQ workspace, 32 x 2 tiles
#          of 16 B + 64 x 64 floats (1,049,600 B); the captures made the gradients only
#          (xmem_gpu/efficient.py).
# Checked: the unit tests of the three rules; the traces hold the temporaries; fast mode and
# the exact capture agree on xmem-estimate's allocated and reserved peaks (bmm, index) and on
# what BCE's backward allocates.
source "$(dirname "$0")/90-fast-torch2-common.bash"
PROFILE=$XMEM_BUILD/bin/xmem-profile
ESTIMATE=$XMEM_BUILD/bin/xmem-estimate
for unit in xmem_gpu/test_gemm.py xmem_gpu/test_index_put.py xmem_gpu/test_reduce.py \
    xmem_gpu/test_efficient.py xmem_fast/test_formulas.py; do
    expect_true "unit tests $unit" "$VPY" "$XMEM_SRC/tests/unit/$unit"
done
for net in bmm index bce bias einsum sdpa; do
    for mode in exact fast; do
        capture=$PROFILE; [ $mode = fast ] && capture=$FAST
        XMEM_GPU_CAPABILITY=8.0 XMEM_GPU_MULTIPROCESSORS=108 "$capture" --python "$VPY" --out "$TMP/$mode-$net.trace" --steps 3 \
            --timeout 300 -- python "$WORKLOADS/cuda_kernels.py" $net >"$TMP/out" 2>&1 ||
            fail "$mode capture of $net"
        "$VPY" "$WORKLOADS/trace_stats.py" --sizes "$TMP/$mode-$net.trace" >"$TMP/$mode-$net.stats"
        "$ESTIMATE" --catalog "$XMEM_SRC/etc/gpus.yaml" --json --gpu A100-40GB \
            --trace-in "$TMP/$mode-$net.trace" >"$TMP/$mode-$net.json" 2>"$TMP/err" ||
            fail "xmem-estimate on the $mode trace of $net"
    done
done
expect_true "the traces lack the CUDA kernels' temporaries or the captures differ" \
    "$VPY" - "$TMP" "$XMEM_SRC" <<'PY'
import json, sys
tmp = sys.argv[1]
bad = False
def check(ok, what):
    global bad
    bad |= not ok
    print(f"{'ok' if ok else 'FAIL'}: {what}")
def load(mode, net, ext):
    return json.load(open(f"{tmp}/{mode}-{net}.{ext}"))
def sized(stats, names, nbytes):
    """Allocations of NBYTES whose attribution names one of NAMES (fast mode names the op,
    the exact capture the backward node around it)."""
    return sum(n for key, n in stats["sizes"].items()
               if any(name in key.rsplit(" ", 1)[0] for name in names)
               and int(key.rsplit(" ", 1)[1]) == nbytes)
steps = 3
rows = 200_000
nets = ("bmm", "index", "bce", "bias", "einsum", "sdpa")
fast = {net: load("fast", net, "stats") for net in nets}
exact = {net: load("exact", net, "stats") for net in nets}
# bmm: [8, 256, 256] fp32: the forward's output, then a whole copy of the expanded gradient in
# each of BmmBackward0's two products
copy = 8 * 256 * 256 * 4
n = sized(fast["bmm"], ("aten::bmm",), copy)
check(n == steps * 3, f"fast bmm: {n} allocations of {copy} B, want {steps} x (output + 2 copies)")
index_put = ("aten::_index_put_impl_", "IndexBackward0")
# index: 5 int64 buffers of 8 * rows and cub's 16 * rows, each step, in both captures
for mode, stats in (("fast", fast["index"]), ("exact", exact["index"])):
    n8 = sized(stats, index_put, 8 * rows)
    n16 = sized(stats, index_put, 16 * rows)
    check((n8, n16) == (steps * 5, steps), f"{mode} index: sort temporaries {n8} x 8N, {n16} x 16N")
# bce: what BCE-with-logits' backward allocates ([4096, 256] fp32), by op: fast mode names the
# op, the exact capture the node and the op
grad = 4096 * 256 * 4
def backward_ops(stats, node):
    found = {}
    for key, count in stats["sizes"].items():
        where, nbytes = key.rsplit(" ", 1)
        op = where.split(">")[-1]
        if int(nbytes) == grad and op in ("aten::sigmoid", "aten::sub", "aten::mul", "aten::add") \
                and (node is None or node in where):
            found[op] = found.get(op, 0) + count
    return found
want = backward_ops(exact["bce"], "BinaryCrossEntropyWithLogitsBackward0")
got = backward_ops(fast["bce"], None)
check(got == want, f"bce backward allocations: exact {want}, fast {got}")
# bias: the staging of each step's bias-gradient sum (4 B x 256 outputs x 16 blocks x 32 x 4)
# and its 8 B of semaphores, in both captures (the exact capture names the node)
for mode, stats, names in (("fast", fast["bias"], ("aten::sum",)),
                           ("exact", exact["bias"], ("AddmmBackward0",))):
    staged, sem = sized(stats, names, 2097152), sized(stats, names, 8)
    check((staged, sem) == (steps, steps), f"{mode} bias: {staged} staging buffers of 2 MiB, {sem} of 8 B")
# einsum: the casts inside einsum, each step: the activation's (bf16, 64 KiB), then the
# weight's (256 KiB)
sys.path.insert(0, f"{sys.argv[2]}/daemon/profiler/python")
import xmem_trace
for mode in ("fast", "exact"):
    strings, casts = {}, []
    for _, kind, parts in xmem_trace.records(f"{tmp}/{mode}-einsum.trace"):
        if kind == "S":
            strings[int(parts[0])] = " ".join(parts[1:])
        elif (kind == "A" and parts[2] == "g" and int(parts[1]) in (65536, 262144)
              and "aten::einsum>" in strings.get(int(parts[4]), "")):
            casts.append(int(parts[1]))
    check(casts == [65536, 262144] * steps, f"{mode} einsum: casts {casts}, want activation then weight")
# sdpa: each step's backward, in both captures (the exact capture names its fused node):
# dQ, dK, dV, the gradient's copy and the product (1 MiB each), the sum and delta (16 KiB)
# and the workspace
for mode, stats, names in (("fast", fast["sdpa"], ("_efficient_attention_backward",)),
                           ("exact", exact["sdpa"], ("_FusedAttentionBackward",))):
    got = [sized(stats, names, n) for n in (1048576, 16384, 32 * 32800)]
    check(got == [steps * 5, steps * 2, steps], f"{mode} sdpa backward: {got} allocations of "
          f"1 MiB, 16 KiB and the workspace, want {[steps * 5, steps * 2, steps]}")
# The estimates, not the traces, are compared: the exact trace also holds the CPU's own
# temporaries (bmm's per-slice copies, a scalar's promotion copy), which its analysis turns
# into the GPU's or drops (docs/cuda-semantics.md, K7 and K9). Not bce's: its forward is a
# CompositeExplicitAutograd kernel whose temporaries, the same on a GPU, fast mode does not
# see (docs/fast-mode.md).
for net in ("bmm", "index", "bias", "sdpa"):
    e, f = load("exact", net, "json"), load("fast", net, "json")
    for key in ("allocated_peak_bytes", "reserved_peak_bytes"):
        check(e[key] == f[key], f"{net}: {key} exact {e[key]}, fast {f[key]}")
sys.exit(1 if bad else 0)
PY
echo "all checks passed"
