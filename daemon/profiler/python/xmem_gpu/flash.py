"""Buffers the GPU's flash attention backward takes for itself, for both captures.

PyTorch's vendored FlashAttention-2 (`mha_bwd` in
aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp) allocates, besides dQ, dK
and dV, and frees on return: `softmax_d`, fp32 (B, H, Lq rounded up to 128); the fp32 dQ
accumulator (B, Lq rounded to 128, H, head dim rounded to 32, or 256 above 192); with fewer
key/value heads than query heads (GQA), dK and dV expanded to the query's heads before they
are summed.
"""
import torch


def _round_up(n, multiple):
    return (n + multiple - 1) // multiple * multiple


def backward_scratch(query, key):
    """[(shape, dtype)] of the scratch for query (B, H, Lq, D) and key (B, Hk, Lk, D)."""
    b, h, lq, d = query.shape
    hk, lk = key.shape[1], key.shape[2]
    lq_rounded = _round_up(lq, 128)
    d_rounded = _round_up(d, 32) if d <= 192 else 256
    buffers = [((b, h, lq_rounded), torch.float32),
               ((b, lq_rounded, h, d_rounded), torch.float32)]
    if hk != h:
        buffers += [((b, lk, h, d), query.dtype)] * 2
    return buffers
