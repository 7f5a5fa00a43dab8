"""Which kernel `F.scaled_dot_product_attention` runs on a CUDA GPU, decided without one.

On a GPU, PyTorch's `select_sdp_backend` (aten/src/ATen/native/transformers/cuda/
sdp_utils.cpp) walks a priority order and takes the first backend whose constraints all hold:
flash and memory-efficient attention keep O(T) per head, the math fallback materialises the
T x T scores (in fp32 for fp16/bf16 inputs). The choice needs the device's compute
capability, which a capture has no device to ask, so it is an argument here (the target GPU's,
from the catalog through XMEM_GPU_CAPABILITY: `target.capability()`).

Mirrors PyTorch 2.14's rules (the constraints in ATen/native/transformers/sdp_utils_cpp.h
and the sm ranges, head-dim limits and dtypes of cuda/sdp_utils.cpp); docs/fast-mode.md lists
them and what is not modelled. The wheel ships the header but not sdp_utils.cpp: rules marked
"inferred" below come from the library's messages and earlier releases. Tensors are only inspected (shape, stride, dtype, storage
offset, requires_grad): no op runs, so a capture's storage tracking sees nothing of this.
Both captures call `choose_backend`; nothing else may decide the backend.
"""
import os
from typing import NamedTuple, Optional

import torch

FLASH, EFFICIENT, CUDNN, MATH = "flash", "efficient", "cudnn", "math"

# torch.nn.attention.SDPBackend values, as torch._C._get_sdp_priority_order() returns them.
_BACKEND_OF_ENUM = {0: MATH, 1: FLASH, 2: EFFICIENT, 3: CUDNN}
_DEFAULT_ORDER = (FLASH, EFFICIENT, MATH, CUDNN)
_NEWEST_SM = (12, 1)  # the newest architecture 2.14's fused kernels are built for
_HALF = (torch.float16,)
_LOW_PRECISION = (torch.float16, torch.bfloat16)


class NoKernel(RuntimeError):
    """Every backend is disabled or unusable: the GPU raises here too."""


class _Side(NamedTuple):
    """One input as the kernels see it: 4-D after an unbatched input gains a batch dim."""

    shape: tuple
    stride: tuple
    dtype: torch.dtype
    offset_bytes: int


class _Call(NamedTuple):
    q: _Side
    k: _Side
    v: _Side
    mask: Optional[_Side]
    mask_requires_grad: bool
    dropout_p: float
    is_causal: bool
    enable_gqa: bool
    training: bool  # an input requires grad and grad mode is on
    sm: tuple


def choose_backend(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                   scale=None, enable_gqa=False, capability=(8, 0)):
    """(backend, reason): backend is "flash", "efficient", "cudnn" or "math", as a GPU of
    `capability` (major, minor) picks it under the current torch.backends.cuda flags and
    sdpa_kernel priority. Raises NoKernel where the GPU would raise "No available kernel"."""
    del scale  # no backend's constraints depend on it
    call = _describe(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa,
                     tuple(capability))
    passed_over = []
    for backend in priority_order(call.sm):
        why_not = _why_not(backend, call)
        if why_not is None:
            return backend, _reason(backend, passed_over)
        passed_over.append(f"{backend}: {why_not}")
    raise NoKernel("no SDPA backend is enabled and usable here (" + "; ".join(passed_over)
                   + ")")


def math_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """The output of aten::_scaled_dot_product_attention_math, the composite a GPU's math
    backend runs. enable_gqa is passed only when asked: torch 2.4's schema has no such
    argument, and its F.scaled_dot_product_attention cannot ask."""
    gqa = {"enable_gqa": True} if enable_gqa else {}
    return torch.ops.aten._scaled_dot_product_attention_math(
        query, key, value, attn_mask, dropout_p, is_causal, None, scale=scale, **gqa)[0]


def priority_order(sm):
    """The order backends are tried in: sdpa_kernel(set_priority=True) or the default, with
    cuDNN first on sm90 / sm100 as 2.14 does unless TORCH_CUDNN_SDPA_DEPRIORITIZED=1."""
    getter = getattr(torch._C, "_get_sdp_priority_order", None)
    order = _DEFAULT_ORDER
    if getter is not None:
        order = tuple(_BACKEND_OF_ENUM[i] for i in getter() if i in _BACKEND_OF_ENUM)
    if order == _DEFAULT_ORDER and _prefers_cudnn(sm):
        order = (CUDNN, FLASH, EFFICIENT, MATH)
    return order


def _prefers_cudnn(sm):
    # Inferred: 2.14 knows TORCH_CUDNN_SDPA_DEPRIORITIZED, i.e. cuDNN leads by default where
    # it is preferred, which releases since 2.8 do on sm90 and sm100 with cuDNN >= 9.9.
    if sm not in ((9, 0), (10, 0)):
        return False
    if os.environ.get("TORCH_CUDNN_SDPA_DEPRIORITIZED", "0") not in ("", "0"):
        return False
    # Asked only here: torch.backends.cudnn checks the device's capability when first asked.
    version = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return bool(version) and version >= 90900


def _reason(backend, passed_over):
    if not passed_over:
        return f"{backend}: first usable backend in priority order"
    return f"{backend}: passed over " + "; ".join(passed_over)


# -- the inputs, as the kernels see them --------------------------------------------------------
def _describe(q, k, v, mask, dropout_p, is_causal, enable_gqa, sm):
    unbatched = q.dim() == 3 and k.dim() == 3 and v.dim() == 3
    lead = 1 if unbatched else 0
    mask_lead = max(0, 4 - mask.dim()) if (mask is not None and unbatched) else 0
    training = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
    return _Call(_side(q, lead), _side(k, lead), _side(v, lead),
                 None if mask is None else _side(mask, mask_lead),
                 mask is not None and mask.requires_grad, float(dropout_p), bool(is_causal),
                 bool(enable_gqa), training, sm)


def _side(t, lead):
    shape, stride = tuple(t.shape), tuple(t.stride())
    outer = shape[0] * stride[0] if shape else 1
    return _Side((1,) * lead + shape, (outer,) * lead + stride, t.dtype,
                 t.storage_offset() * t.element_size())


# -- per-backend constraints: each returns None when it holds, else why not -------------------
def _why_not(backend, call):
    for check in _CHECKS[backend]:
        why = check(call)
        if why is not None:
            return why
    return None


def _enabled(flag):
    def check(call):
        return None if _flag(flag) else "disabled (torch.backends.cuda / sdpa_kernel)"
    return check


def _flag(name):
    getter = getattr(torch.backends.cuda, name, None)
    return True if getter is None else bool(getter())


def _flash_built(call):
    built = getattr(torch.backends.cuda, "is_flash_attention_available", lambda: True)()
    return None if built else "this torch is built without flash attention"


def _sm_range(low):
    def check(call):
        if low <= call.sm <= _NEWEST_SM:
            return None
        return f"sm{_sm_name(call.sm)} is outside [sm{_sm_name(low)}, sm{_sm_name(_NEWEST_SM)}]"
    return check


def _sm_name(sm):
    return f"{sm[0]}{sm[1]}"


def _four_dims(call):
    dims = {len(s.shape) for s in (call.q, call.k, call.v)}
    return None if dims == {4} else "fused kernels need 4-D query, key and value"


def _nonzero_lengths(call):
    if call.q.shape[-2] == 0 or call.k.shape[-2] == 0:
        return "a zero sequence length"
    return None


def _last_dim_contiguous(ignore_singleton):
    def check(call):
        unit = all(s.stride[-1] == 1 for s in (call.q, call.k, call.v))
        if ignore_singleton and call.q.shape[-1] == 1:
            unit = True
        if call.mask is not None and call.mask.stride[-1] != 1:
            unit = False
        return None if unit else "the last dimension of an input (or attn_mask) has stride != 1"
    return check


def _heads(supports_gqa, same_kv_heads=True, supports_mqa=False):
    def check(call):
        b = {call.q.shape[0], call.k.shape[0], call.v.shape[0]}
        if len(b) != 1:
            return "query, key and value batch sizes differ"
        hq, hk, hv = call.q.shape[-3], call.k.shape[-3], call.v.shape[-3]
        if call.enable_gqa and supports_gqa:
            if (same_kv_heads and hk != hv) or hq % hk or (not same_kv_heads and hq % hv):
                return f"key/value heads ({hk}, {hv}) do not divide query heads ({hq})"
            return None
        if hq == hk == hv or (supports_mqa and hk == hv == 1):
            return None
        return f"query/key/value head counts differ ({hq}, {hk}, {hv}) without enable_gqa"
    return check


def _dtypes(sm80_and_newer, older):
    def check(call):
        allowed = sm80_and_newer if call.sm >= (8, 0) else older
        dtypes = {call.q.dtype, call.k.dtype, call.v.dtype}
        if len(dtypes) == 1 and call.q.dtype in allowed:
            return None
        names = ", ".join(str(d).replace("torch.", "") for d in allowed)
        return f"dtype {call.q.dtype} not in ({names}) on sm{_sm_name(call.sm)}"
    return check


def _no_mask(call):
    return None if call.mask is None else "takes no attn_mask"


def _flash_head_dim(call):
    d = {call.q.shape[-1], call.k.shape[-1], call.v.shape[-1]}
    return None if len(d) == 1 and max(d) <= 256 else "needs one head dim <= 256 for q, k, v"


def _flash_training_head_dim(call):
    # The backward kernels of sm86/89 and sm120/121 lack shared memory for these head dims.
    small_smem = (8, 6) <= call.sm <= (8, 9) or (12, 0) <= call.sm <= (12, 1)
    d = call.q.shape[-1]
    too_big = 192 < d <= 224 or (d > 224 and call.dropout_p > 0.0)
    if call.training and small_smem and too_big:
        return f"no backward for head dim {d} on sm{_sm_name(call.sm)}"
    return None


def _flash_causal_square(call):
    if call.is_causal and call.q.shape[-2] != call.k.shape[-2]:
        return "is_causal with seqlen_q != seqlen_k"
    return None


def _gemm_alignment(call):
    """minimum_gemm_alignment: what the memory-efficient kernel's head dims must divide by."""
    half = call.q.dtype in _LOW_PRECISION
    tensor_cores = call.sm >= (8, 0) or (call.sm >= (7, 0) and half)
    alignment = 4 if call.sm >= (8, 0) else 1
    if tensor_cores:
        alignment = max(alignment, 128 // (16 if half else 32))
    return alignment


def _efficient_head_dim(call):
    a = _gemm_alignment(call)
    dq, dk, dv = call.q.shape[-1], call.k.shape[-1], call.v.shape[-1]
    if dq == dk and dq > 0 and dv > 0 and dq % a == 0 and dv % a == 0:
        return None
    return f"head dims ({dq}, {dv}) must match for q, k and divide by {a}"


def _efficient_offsets(call):
    # Inferred: the message names "storage offsets * element_size aligned to N bytes" on sm80+.
    if call.sm < (8, 0) or all(s.offset_bytes % 16 == 0 for s in (call.q, call.k, call.v)):
        return None
    return "q/k/v storage offsets not 16-byte aligned"


def _cudnn_shapes(call):
    dqk, dv = call.q.shape[-1], call.v.shape[-1]
    if dqk > 256 or dv > 256 or dqk % 8 or dv % 8:
        return f"head dims ({dqk}, {dv}) must be <= 256 and multiples of 8"
    if call.k.shape[-2] == 1:
        return "key/value sequence length 1"
    if call.q.shape[-2] == 1 and call.dropout_p > 0.0:
        return "query sequence length 1 with dropout"
    return None


def _cudnn_training(call):
    if not call.training:
        return None
    if torch.are_deterministic_algorithms_enabled():
        return "not deterministic (torch.use_deterministic_algorithms)"
    # Inferred (check_cudnn_d256_bprop_head_dim): conservative, flash then takes these.
    big = call.q.shape[-1] > 128 or call.v.shape[-1] > 128
    if big and call.sm[0] in (9, 10):
        return "no backward for head dims over 128 on sm90/sm10x"
    return None


def _cudnn_dropout(call):
    p = call.dropout_p * 16
    return None if p == int(p) else "dropout_p is not a multiple of 1/16"


def _cudnn_mask(call):
    m = call.mask
    if m is None:
        return None
    if call.mask_requires_grad:
        return "attn_mask requires grad"
    b, h, sq, sk = call.q.shape[0], call.q.shape[1], call.q.shape[2], call.k.shape[2]
    def fits(got, want):
        return got in (want, 1)

    ok = len(m.shape) in (2, 4) and fits(m.shape[-2], sq) and fits(m.shape[-1], sk)
    if ok and len(m.shape) == 4:
        ok = fits(m.shape[0], b) and fits(m.shape[1], h)
    return None if ok else "attn_mask is not 2-D or 4-D broadcastable to (B, H, Lq, Lk)"


_CHECKS = {
    FLASH: (_enabled("flash_sdp_enabled"), _flash_built, _four_dims, _no_mask, _flash_head_dim,
            _sm_range((8, 0)), _flash_training_head_dim, _flash_causal_square,
            _dtypes(_LOW_PRECISION, _HALF), _heads(supports_gqa=True), _nonzero_lengths,
            _last_dim_contiguous(ignore_singleton=True)),
    EFFICIENT: (_enabled("mem_efficient_sdp_enabled"), _sm_range((5, 0)), _four_dims,
                _efficient_head_dim, _nonzero_lengths, _last_dim_contiguous(False),
                _heads(supports_gqa=False, supports_mqa=True),  # MQA broadcast: inferred
                _dtypes(_LOW_PRECISION + (torch.float32,), (torch.float16, torch.float32)),
                _efficient_offsets),
    CUDNN: (_enabled("cudnn_sdp_enabled"), _nonzero_lengths, _last_dim_contiguous(True),
            _four_dims, _cudnn_shapes, _cudnn_training, _dtypes(_LOW_PRECISION, ()),
            _cudnn_mask, _sm_range((8, 0)), _cudnn_dropout,
            _heads(supports_gqa=True, same_kv_heads=False)),
    MATH: (_enabled("math_sdp_enabled"),),
}
