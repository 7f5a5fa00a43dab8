"""F.scaled_dot_product_attention as a CUDA GPU runs it, on the fast capture's device tensors.

Meta tensors would take the composite math path (T x T scores) whatever the GPU, since no
device answers torch's own backend choice. Here the one chooser (xmem_gpu/sdpa.py) picks the
backend the target GPU takes, and the call goes where attention.cpp's
`scaled_dot_product_attention` sends it: the fused op's Meta kernel allocates what the CUDA
kernel returns (output, logsumexp, RNG state) and autograd saves what the GPU saves, so its
backward (`_scaled_dot_product_*_backward`) allocates as the GPU does. The preparations
attention.cpp makes on the way are repeated because they allocate too: a boolean mask
becomes an additive mask of the query's dtype, flash pads the head dim to a multiple of 8,
memory-efficient attention pads a misaligned mask.
"""
import math

import torch
import torch.nn.functional as F

from xmem_gpu import sdpa

aten = torch.ops.aten
_MEM_EFFICIENT_MASK_ALIGNMENT = 8  # attention.cpp's mem_eff_alignment for the bias


def scaled_dot_product_attention(capability, query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    backend, _ = sdpa.choose_backend(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                     enable_gqa, capability)
    unbatched = backend != sdpa.MATH and query.dim() == 3
    if unbatched:  # the fused kernels want a batch dimension (sdp_utils_cpp.h)
        query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        while attn_mask is not None and attn_mask.dim() < 4:
            attn_mask = attn_mask.unsqueeze(0)
    out = _RUN[backend](query, key, value, attn_mask, float(dropout_p), bool(is_causal), scale,
                        bool(enable_gqa))
    return out.squeeze(0) if unbatched else out


def _additive_mask(mask, dtype):
    """convert_boolean_attn_mask: True keeps (0), False masks (-inf), in the query's dtype."""
    if mask is None or mask.dtype != torch.bool:
        return mask
    ninf = torch.scalar_tensor(-math.inf, dtype=dtype, device=mask.device)
    return torch.where(mask, 0.0, ninf)


def _training(*tensors):
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


def _flash(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa):
    head_dim = q.size(-1)
    if scale is None:
        scale = 1.0 / math.sqrt(head_dim)  # from the head dim before padding
    pad = (8 - head_dim % 8) % 8
    if pad:
        q, k, v = (F.pad(t, (0, pad)) for t in (q, k, v))
    out = aten._scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, False,
                                                   scale=scale)[0]
    return out[..., :head_dim] if pad else out


def _pad_mask(mask):
    """preprocess_mask: a bias whose rows are not aligned is padded (then sliced back), and
    expanded to (B, H, Lq, Lk) as a view."""
    a = _MEM_EFFICIENT_MASK_ALIGNMENT
    aligned = mask.stride(-1) == 1 and all(s % a == 0 for s in mask.stride()[:-1])
    if not aligned:
        size = mask.size(-1)
        mask = F.pad(mask, (0, a - size % a))[..., :size]
    return mask


def _efficient(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa):
    if mask is not None:
        mask = _pad_mask(_additive_mask(mask, q.dtype))
        mask = mask.expand(q.size(0), q.size(1), q.size(2), k.size(2))
    return aten._scaled_dot_product_efficient_attention(
        q, k, v, mask, _training(q, k, v), dropout_p, is_causal, scale=scale)[0]


def _cudnn(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa):
    mask = _additive_mask(mask, q.dtype)
    return aten._scaled_dot_product_cudnn_attention(
        q, k, v, mask, _training(q, k, v), dropout_p, is_causal, False, scale=scale)[0]


def _math(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa):
    # fp16/bf16 inputs are computed in fp32 inside (the T x T scores too), as on the GPU.
    return sdpa.math_attention(q, k, v, _additive_mask(mask, q.dtype), dropout_p, is_causal,
                               scale, enable_gqa)


_RUN = {sdpa.FLASH: _flash, sdpa.EFFICIENT: _efficient, sdpa.CUDNN: _cudnn, sdpa.MATH: _math}

# Outputs a CUDA kernel returns on the host, by op and output index; their Meta kernels say
# "meta", which the storage tracker would put on the device. The memory-efficient kernel's
# philox seed and offset are 0-d CPU longs in eager mode (the CUDA device only under CUDA
# graph capture: "Note [Seed and Offset]" in torch/_meta_registrations.py; FakeTensor's
# cross-checks excuse exactly these outputs' devices, torch/_subclasses/fake_utils.py).
HOST_OUTPUTS = {}
_op = getattr(aten, "_scaled_dot_product_efficient_attention", None)  # torch 2.x
if _op is not None:
    HOST_OUTPUTS[_op.default] = (2, 3)
