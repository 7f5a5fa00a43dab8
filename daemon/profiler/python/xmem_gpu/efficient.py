"""Buffers the GPU's memory-efficient attention backward takes for itself, for both captures.

`_efficient_attention_backward` (aten/src/ATen/native/transformers/cuda/attention_backward.cu)
runs one CUTLASS kernel (mem_eff_attention/kernel_backward.h, in the headers torch installs)
and allocates around it, besides dQ, dK and dV:

* before the gradients, `grad_out.contiguous()` of the output's gradient in (B, M, nH, Kv)
  layout, when it is not already (a gradient that reaches SDPA as a transposed view of a
  contiguous (B, M, nH, Kv) tensor, as transformers' `attn_output.transpose(1, 2)` gives,
  needs no copy);
* after them, `delta`, the row sums of dO * O (fp32, (B, nH, M)): a kernel that computes it
  itself (`kKernelComputesDelta`: 16-bit inputs, unless an sm70-class kernel keeps dK/dV in
  global memory) only gets the empty tensor; otherwise the expression
  `(grad_out.to(float) * out.to(float)).sum(-1).transpose(-2, -1).contiguous()` runs, whose
  temporaries (the fp32 copies of 16-bit inputs, the product, the sum, staged as any CUDA sum
  is, reduce.py) are freed when it ends;
* then the kernel's `workspace` (bytes, `Params::workspace_size()`): per batch and head an
  fp32 dQ accumulator tile with a 16-byte lock header per (query block, head-dim block)
  whenever the kernel may split the keys (sm70 and later) or its output is 16-bit; and fp32
  dK and dV accumulators for 16-bit kernels that cannot keep them in registers (head dim above
  the block's rows), one per key split.

`delta` is freed when the kernel is queued, the workspace and the copy when the function
returns. The kernel is the first of torch's list (kernels/cutlassB.h, `dispatch_cutlassB`)
whose head-dim bound covers max(K, Kv) and, with dropout, that applies dropout. Not modelled:
a kernel torch skips because its shared memory exceeds the card's opt-in limit (the next one
then has 64-row blocks: for fp32 only the padding of the queries differs), and inputs past
65,535 batches, which torch processes in chunks.
"""
import torch

from . import reduce, target
from .index_put import ALLOC, FREE

_F32 = torch.float32
_GRAD_Q_HEADER = 16  # GradQTempStorage's lock, counter and padding

# (query block I, key block J, head-dim bound, compute capabilities it is built for or None)
# in torch's order per arch class; the dropout kernels repeat each entry but the cc-only one.
_BASIC = ((64, 64, 32, None), (64, 64, 64, None), (64, 64, 128, None), (64, 64, 65536, None))
_WIDE = ((64, 64, 32, None), (64, 64, 64, None), (128, 64, 128, None), (64, 64, 128, None),
         (128, 64, 65536, None), (64, 64, 65536, None))
_HALF_SM80 = ((64, 64, 32, None), (64, 64, 64, None), (128, 64, 96, (86, 89)),
              (128, 128, 128, None), (64, 64, 128, None), (128, 64, 65536, None),
              (64, 64, 65536, None))


def _kernels(dtype, cc):
    """(arch class, kernel list) dispatch_cutlassB takes for DTYPE at compute capability CC
    (major * 10 + minor), or None when it has none."""
    half = dtype in (torch.float16, torch.bfloat16)
    if 80 <= cc <= 121:
        return 80, _HALF_SM80 if half else _WIDE
    if dtype == torch.bfloat16:
        return None
    if 75 <= cc <= 79:
        return 75, _WIDE if half else _BASIC
    if 70 <= cc <= 74:
        return 70, _WIDE if half else _BASIC
    if 50 <= cc <= 69:
        return 50, _BASIC
    return None


def _choose(dtype, cc, max_k, dropout):
    """(arch class, I, J, bound) of the kernel torch launches, or None."""
    found = _kernels(dtype, cc)
    if found is None:
        return None
    arch, kernels = found
    for i, j, bound, only in kernels:
        if bound >= max_k and (only is None or (cc in only and not dropout)):
            return arch, i, j, bound
    return None


def _ceil_div(a, b):
    return -(-a // b)


def _align_up(a, b):
    return _ceil_div(a, b) * b


def _splits(b, heads, keys, j, accumulates_kv):
    """The key-splitting heuristic's `num_splits_key` (attention_backward.cu)."""
    splits = _ceil_div(keys, j)
    if b * heads >= 256 and keys <= 2 * j:
        splits = 1
    if accumulates_kv:
        splits = min(splits, 200 // (b * heads))
    if splits < 1 or torch.are_deterministic_algorithms_enabled():
        splits = 1
    return splits


def workspace_bytes(dtype, cc, b, heads, queries, keys, head_dim, head_dim_v, dropout):
    """Params::workspace_size() of the kernel torch launches, and whether it computes delta
    itself: (bytes, computes_delta), or None when no kernel serves the inputs."""
    chosen = _choose(dtype, cc, max(head_dim, head_dim_v), dropout)
    if chosen is None:
        return None
    arch, i, j, bound = chosen
    half = dtype != _F32
    in_registers = half and bound <= i  # kOutputInRF
    accumulates_q = arch >= 70 or half  # kNeedsAccumGradQ: split keys, or a 16-bit output
    accumulates_kv = half and not in_registers
    splits = _splits(b, heads, keys, j, accumulates_kv) if arch >= 70 else 1
    floats = 0
    if accumulates_kv:
        floats += splits * j * (_align_up(head_dim, i) + _align_up(head_dim_v, i))
    if accumulates_q:
        tiles = _ceil_div(queries, i) * _ceil_div(head_dim, j)
        floats += tiles * (_GRAD_Q_HEADER // 4 + i * j)
    computes_delta = half and (in_registers or arch != 70)
    return b * heads * _align_up(floats, 4) * 4, computes_delta


def gradient_copy(grad_out):
    """[(shape, dtype)] of `grad_out.contiguous()` for GRAD_OUT (B, nH, M, Kv): the (B, M, nH,
    Kv) copy when that layout is not contiguous, else []."""
    if grad_out.dim() != 4:
        return []
    bmhk = grad_out.transpose(1, 2)
    return [] if bmhk.is_contiguous() else [(tuple(bmhk.shape), grad_out.dtype)]


def _delta_expression(shape, dtype, multiprocessors, threads):
    """Steps of `(grad_out.to(float) * out.to(float)).sum(-1).transpose(-2, -1).contiguous()`
    on (B, M, nH, Kv) operands of DTYPE: its result is `delta`; the temporaries are freed
    when the expression ends, the last made first."""
    b, m, heads, kv = shape
    steps, temporaries = [], []
    if dtype != _F32:  # `to(float)` copies 16-bit operands, dO's first
        steps += [(ALLOC, "dO", shape, _F32), (ALLOC, "O", shape, _F32)]
        temporaries += ["dO", "O"]
    product = torch.empty(shape, dtype=_F32, device="meta")
    steps += [(ALLOC, "product", shape, _F32)]
    temporaries += ["product"]
    # the transposed sum is contiguous already with one head or one query: no copy
    copies = heads > 1 and m > 1
    total = "sum" if copies else "delta"
    steps += [(ALLOC, total, (b, m, heads), _F32)]
    steps += reduce.steps(reduce.buffers(product, [-1], _F32, multiprocessors, threads))
    if copies:
        steps += [(ALLOC, "delta", (b, heads, m), _F32)]
        temporaries += ["sum"]
    return steps + [(FREE, name) for name in reversed(temporaries)]


def backward_steps(query, key, value, dropout_p, capability, multiprocessors=None,
                   threads_per_multiprocessor=2048):
    """Steps (index_put.py's form) the CUDA backward takes after dQ, dK and dV exist, for
    SDPA's (B, nH, M, K) operands: delta, then the workspace; delta
    freed when the kernel is queued, the workspace when the function returns. [] when no
    kernel serves the inputs (the chooser would not have picked this backend)."""
    if query.dim() != 4:  # the fused kernels' (B, nH, M, K) form
        return []
    b, heads, m, head_dim = query.shape
    keys, head_dim_v = key.shape[2], value.shape[3]
    cc = capability[0] * 10 + capability[1]
    sized = workspace_bytes(query.dtype, cc, b, heads, m, keys, head_dim, head_dim_v,
                            dropout_p != 0.0)
    if sized is None:
        return []
    nbytes, computes_delta = sized
    if computes_delta:
        steps = [(ALLOC, "delta", (b, heads, m), _F32)]
    else:
        steps = _delta_expression((b, m, heads, head_dim_v), query.dtype, multiprocessors,
                                  threads_per_multiprocessor)
    if nbytes:
        steps += [(ALLOC, "workspace", (nbytes,), torch.uint8)]
    steps += [(FREE, "delta")]
    return steps + ([(FREE, "workspace")] if nbytes else [])


def program(query, key, value, dropout_p):
    """backward_steps on the target GPU (target.py): its capability, and its multiprocessor
    count for the staging of delta's sum."""
    cc = target.capability()
    return backward_steps(query, key, value, dropout_p, cc, target.multiprocessors(),
                          target.threads_per_multiprocessor(cc))
