"""CUDA autocast on the fast capture's device tensors (torch 2.x).

`torch.autocast('cuda')` runs as it is (torch.cuda answers from the shim, so it turns on),
but its casts live at the AutocastCUDA dispatch key, which meta tensors do not carry. So the
device mode applies CUDA's op policy itself, at the torch-function level, reading the same
state (`torch.is_autocast_enabled('cuda')`, `get_autocast_dtype`) so nested
`autocast(enabled=False)` regions and `torch.is_autocast_enabled()` checks in user code agree:

* lower precision (matmuls, convolutions, linear, SDPA...): fp32 device inputs become copies
  in the autocast dtype, the last argument first, except the operands of `einsum` (and
  `chain_matmul`), which ATen takes as one list and casts first to last; a leaf fp32 parameter's copy is cached until the outermost autocast
  exits, as `cached_cast` does, so each weight is cast once per forward. Inside
  `torch.inference_mode()` torch 2.14's `cached_cast` caches nothing (2.6's does): each
  call casts the weight again and frees the copy with the op. Which one the installed torch
  does is measured once at start (`caches_in_inference_mode`): caching there regardless put
  a bf16 inference loop's peak 41 % above the exact capture's (test 94);
* fp32 (layer_norm, group_norm, exp/log/pow, the losses incl. cross_entropy...): fp16/bf16
  inputs become fp32 copies;
* fp32 output dtype (softmax, log_softmax, sum, cumsum, prod): `dtype=float32` is set when
  the caller gave none, so the output is fp32 without a copy of the input;
* promote (cat, stack, addcmul...): inputs are cast to the widest floating dtype among them.

The casts run as ordinary ops under autograd, so what is saved for backward, and the
gradients' dtypes, are a GPU run's. Lists: aten/src/ATen/autocast_mode.cpp (CUDA). Not
reproduced: the norms' fp32 "append dtype" policy.
"""
import torch
import xmem_patches as patches
from torch.utils._python_dispatch import TorchDispatchMode

from xmem_capture import autocast_state, devices

LOWER = ("conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
         "conv_transpose3d", "convolution", "_convolution", "prelu", "addmm", "addmv", "addr",
         "matmul", "einsum", "mm", "mv", "vecdot", "linear", "addbmm", "baddbmm", "bmm",
         "chain_matmul", "multi_dot", "lstm_cell", "gru_cell", "rnn_tanh_cell",
         "rnn_relu_cell", "scaled_dot_product_attention", "__matmul__", "__rmatmul__")
FP32 = ("acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
        "reciprocal", "rsqrt", "sinh", "tan", "pow", "__pow__", "__rpow__", "__rdiv__",
        "__rtruediv__", "softplus", "layer_norm", "native_layer_norm", "group_norm",
        "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss",
        "nll_loss2d", "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss",
        "huber_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
        "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
        "binary_cross_entropy_with_logits", "cross_entropy_loss", "dist", "pdist", "cdist",
        "renorm", "logsumexp", "upsample_nearest1d", "upsample_nearest2d",
        "upsample_nearest3d", "upsample_linear1d", "upsample_bilinear2d",
        "upsample_trilinear3d", "upsample_bicubic2d", "cross_entropy", "interpolate")
FP32_OUTPUT = ("softmax", "log_softmax", "sum", "cumsum", "cumprod", "prod")
# Functions whose tensor arguments reach ATen as one TensorList: CUDA's wrapper casts a list
# first to last (`cached_cast` of a vector), where separate arguments are cast last first.
IN_ORDER = ("einsum", "chain_matmul")
PROMOTE = ("addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot", "grid_sampler",
           "index_put", "scatter_add", "tensordot", "cat", "stack", "index_copy")
_REDUCED = (torch.float16, torch.bfloat16)


def policies():
    """torch function (as a TorchFunctionMode receives it) -> 'lower' | 'fp32' | 'fp32_output'
    | 'promote'."""
    # torch.nn.functional's Python functions too (F.layer_norm, F.cross_entropy): the mode is
    # off while they run, so the builtins they call are not seen.
    tensor_base = devices.TensorBase
    spaces = (torch, torch._C._nn, tensor_base, torch.Tensor, torch.linalg, torch.functional,
              torch.nn.functional)
    table = {}
    for kind, names in (("lower", LOWER), ("fp32", FP32), ("fp32_output", FP32_OUTPUT),
                        ("promote", PROMOTE)):
        for name in names:
            for space in spaces:
                f = getattr(space, name, None)
                if callable(f):
                    table[f] = f"{kind}_in_order" if name in IN_ORDER else kind
    return table


class _CountCasts(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.casts = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in (torch.ops.aten._to_copy.default, torch.ops.aten.to.dtype):
            self.casts += 1
        return func(*args, **(kwargs or {}))


def caches_in_inference_mode():
    """Whether this torch's autocast caches a leaf weight's cast inside inference_mode: two
    matmuls of one host weight under CPU autocast (cached_cast is the same code for every
    device) cast the weight once if it does, twice if not."""
    weight, x = torch.ones(2, 2, requires_grad=True), torch.ones(2, 2)
    counter = _CountCasts()
    try:
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16), counter:
            torch.mm(x, weight)
            torch.mm(x, weight)
    except RuntimeError:  # a build without CPU autocast: keep the cache, as cached_cast did
        return True
    return counter.casts == 3  # x twice, the weight once


class Autocast:
    """Applies the policy of `func` to its arguments when CUDA autocast is on."""

    def __init__(self, on_device):
        self.on_device = on_device
        self.table = policies()
        self.cache = {}  # id(leaf parameter) -> (parameter, its low-precision copy)
        self.caches_in_inference_mode = caches_in_inference_mode()
        clear = torch.clear_autocast_cache

        def clear_autocast_cache():  # the outermost autocast's exit
            self.cache.clear()
            clear()

        patches.replace("torch.clear_autocast_cache", clear_autocast_cache)

    def policy(self, func):
        kind = self.table.get(func)
        if kind is None or not autocast_state.enabled("cuda"):
            return None
        return kind

    def cast(self, kind, args, kwargs):
        if kind == "fp32_output":
            return args, self._fp32_output(args, kwargs)
        if kind == "promote":
            dtype = self._widest(args, kwargs)
            if dtype is None:
                return args, kwargs
            convert = self._to(dtype)
        elif kind == "fp32":
            convert = self._to(torch.float32)
        else:
            convert = self._lower(autocast_state.dtype("cuda"))
        if kind == "lower_in_order":  # einsum(eq, *operands): one TensorList on the GPU
            return tuple(_map(convert, a) for a in args), kwargs
        return _map_right_to_left(convert, args, kwargs)

    def _eligible(self, t):
        return (isinstance(t, torch.Tensor) and t.is_floating_point()
                and t.dtype != torch.float64 and self.on_device(t))

    def _to(self, dtype):
        def convert(t):
            if self._eligible(t) and t.dtype != dtype:
                return t.to(dtype)
            return t
        return convert

    def _lower(self, dtype):
        def convert(t):
            if not self._eligible(t) or t.dtype == dtype:
                return t
            cacheable = (t.dtype == torch.float32 and t.requires_grad and t.is_leaf
                         and not t._is_view() and torch.is_autocast_cache_enabled()
                         and (self.caches_in_inference_mode
                              or not torch.is_inference_mode_enabled()))
            if not cacheable:
                return t.to(dtype)
            hit = self.cache.get(id(t))
            if hit is None or hit[0] is not t:
                hit = self.cache[id(t)] = (t, t.to(dtype))
            return hit[1]
        return convert

    def _widest(self, args, kwargs):
        dtypes = {t.dtype for t in _flat((args, kwargs)) if self._eligible(t)}
        return torch.float32 if len(dtypes) > 1 else None  # fp32 is the widest of the three

    def _fp32_output(self, args, kwargs):
        first = next(iter(_flat(args)), None)
        given = "dtype" in kwargs or any(isinstance(a, torch.dtype) for a in args)
        if given or first is None or not self._eligible(first):
            return kwargs
        return dict(kwargs, dtype=torch.float32)


def _map_right_to_left(convert, args, kwargs):
    """Casts the last argument first, as torch's compiled autocast wrapper does: it casts its
    arguments in one call's argument list, which GCC evaluates right to left (the exact
    trace's linear casts bias, weight, input in that order, and the CUDA wrappers are the
    same template in the same library). The order decides the casts' autograd sequence
    numbers, so the order of the backward nodes, and with it which frees come before which
    allocations."""
    cast_kwargs = {k: _map(convert, kwargs[k]) for k in reversed(list(kwargs))}
    cast_args = [_map(convert, a) for a in reversed(args)][::-1]
    return tuple(cast_args), {k: cast_kwargs[k] for k in kwargs}


def _map(convert, value):
    if isinstance(value, torch.Tensor):
        return convert(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(convert, v) for v in value)
    return value


def _flat(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _flat(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _flat(v)
