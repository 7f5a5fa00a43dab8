"""CUDA autocast's fp32 ops, reproduced on top of CPU autocast.

`torch.autocast('cuda')` runs on the CPU as CPU autocast in bfloat16 (amp.py): the ops CUDA
autocast runs in reduced precision (convolutions, matmuls, linear) are the ones CPU autocast
lowers too, and bf16 has fp16's size. The difference is the other end: CUDA autocast runs a
longer list of ops in fp32 -- layer_norm, group_norm, softmax and log_softmax (through their
dtype argument), exp, log, pow and other precision-sensitive math -- which CPU autocast (1.13)
leaves in bf16. Their outputs, often saved for backward (a layer norm's input copy, the
attention probabilities), are then twice as large on the GPU as in the CPU trace.

So, once a script enters CUDA autocast, xmem registers kernels for those ops at the
AutocastCPU dispatch key that do what CUDA's autocast kernels do: cast reduced-precision
inputs to fp32 (real copies, as `cached_cast` makes them), or set `dtype=float32` for the
"fp32_set_opt_dtype" ops, then call the op with autocast off. Being dispatcher kernels, they
also apply inside composite functions (nn.MultiheadAttention's softmax) and autograd records
the casts, so what is saved for backward has the dtype a CUDA run saves. The same holds for
upsampling and rms_norm (fp32 on CUDA), and for the few ops only CUDA lowers (mv, addmv,
addr): their kernels cast fp32 inputs to bf16. The lists were checked against the dispatcher
of torch 2.14 (ops with an AutocastCUDA kernel and none at AutocastCPU).
Checked on torch 1.13 and 2.14: CPU autocast in 2.x still leaves all of these as 1.13 does.

Lists: PyTorch's aten/src/ATen/autocast_mode.cpp (CUDA fp32 and fp32_set_opt_dtype
policies), minus the ops CPU autocast 1.13 already runs in fp32 (nll_loss, mse/l1/huber
losses, kl_div, cdist, prod, binary_cross_entropy_with_logits...). Not reproduced: sum,
cumsum and cumprod's set_opt_dtype (small outputs in training, and hot ops); norms; and a
softmax of a bf16 input with dtype=float32 makes a transient fp32 copy of its input on the
CPU, which CUDA's half-to-float kernel avoids for fp16 (an over-estimate, never an under).
"""
import torch

_REDUCED = (torch.bfloat16, torch.float16)

# CUDA runs these in fp32; CPU autocast 1.13 leaves them in bf16 (checked by test 22).
FP32_OPS = (
    "layer_norm", "group_norm", "exp", "log", "log2", "log10", "log1p", "expm1", "reciprocal",
    "rsqrt", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", "softplus",
    "cosine_similarity", "logsumexp", "dist", "acos", "asin", "cosh", "erfinv", "sinh", "tan",
    "renorm",
)
# Also fp32 on CUDA, left in bf16 by CPU autocast; some are missing from older torch.
FP32_OPS_IF_PRESENT = (
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "upsample_linear1d",
    "upsample_bilinear2d", "upsample_bicubic2d", "upsample_trilinear3d",
    "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d",
    "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa", "rms_norm",
)
# CUDA sets dtype=float32 on these when the caller gave none.
SET_DTYPE_OPS = ("softmax.int", "log_softmax.int")
# CUDA runs these in reduced precision; CPU autocast (1.13 and 2.x) leaves them fp32 (einsum:
# CPU autocast casts inside it, at its bmm, the weight first and after einsum's own reshapes;
# CUDA's kernel casts the operand list first to last, before them).
LOWER_OPS = ("mv", "addmv", "addr", "einsum")

_state = {"lib": None}


def _up(a):
    """fp32 copy of a reduced-precision tensor (or of each in a list); anything else as is."""
    if isinstance(a, torch.Tensor):
        return a.float() if a.dtype in _REDUCED else a
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor):
        return type(a)(_up(t) for t in a)
    return a


def _op(qualified):
    name, _, overload = qualified.partition(".")
    packet = getattr(torch.ops.aten, name)
    return getattr(packet, overload or "default")


def _fp32_kernel(op):
    def kernel(*args, **kwargs):
        with torch.autocast("cpu", enabled=False):
            return op(*[_up(a) for a in args], **{k: _up(v) for k, v in kwargs.items()})
    return kernel


def _down(a):
    """The autocast dtype's copy of an fp32 tensor (CPU autocast here is always bf16), or of
    each in a list, first to last as CUDA's `cached_cast` of a TensorList."""
    if isinstance(a, torch.Tensor) and a.dtype == torch.float32:
        return a.to(torch.bfloat16)
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor):
        return type(a)(_down(t) for t in a)
    return a


def _lower_kernel(op):
    def kernel(*args, **kwargs):
        with torch.autocast("cpu", enabled=False):
            return op(*[_down(a) for a in args], **{k: _down(v) for k, v in kwargs.items()})
    return kernel


def _set_dtype_kernel(op):
    def kernel(x, dim, dtype=None):
        with torch.autocast("cpu", enabled=False):
            if dtype is None and x.is_floating_point() and x.dtype != torch.float64:
                dtype = torch.float32
            return op(x, dim, dtype)
    return kernel


def install(note):
    """Registers the kernels once per process (the first time CUDA autocast is entered)."""
    if _state["lib"] is not None:
        return
    lib = torch.library.Library("aten", "IMPL", "AutocastCPU")
    for name in FP32_OPS:
        lib.impl(name, _fp32_kernel(_op(name)))
    for name in FP32_OPS_IF_PRESENT:
        if hasattr(torch.ops.aten, name):
            lib.impl(name, _fp32_kernel(_op(name)))
    for name in SET_DTYPE_OPS:
        lib.impl(name, _set_dtype_kernel(_op(name)))
    for name in LOWER_OPS:
        lib.impl(name, _lower_kernel(_op(name)))
    _state["lib"] = lib  # the registrations live as long as this object
    note("amp_fp32_ops", "cuda-autocast-fp32-list")
