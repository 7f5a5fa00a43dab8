"""Buffers a CUDA kernel allocates for itself and frees before it returns.

A Meta kernel returns the op's outputs only; where the CUDA kernel also takes scratch
memory from the caching allocator while it runs, that transient raises the peak on a GPU.
Each entry gives, from the op's arguments, the (shape, dtype) of each such buffer; the
storage tracker allocates them before the outputs and frees them at the next op boundary.

Flash attention's backward (PyTorch's vendored FlashAttention-2, `mha_bwd` in
aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp): `softmax_d`, fp32
(B, H, Lq rounded up to 128); the fp32 dQ accumulator (B, Lq rounded to 128, H, head dim
rounded to 32, or 256 above 192); with fewer key/value heads than query heads (GQA), dK and
dV expanded to the query's heads before they are summed. The memory-efficient and cuDNN
backward kernels' own scratch is not modelled.
"""
import torch

aten = torch.ops.aten


def _round_up(n, multiple):
    return (n + multiple - 1) // multiple * multiple


def flash_backward(grad_out, query, key, value, *rest):
    b, h, lq, d = query.shape
    hk, lk = key.shape[1], key.shape[2]
    lq_rounded = _round_up(lq, 128)
    d_rounded = _round_up(d, 32) if d <= 192 else 256
    buffers = [((b, h, lq_rounded), torch.float32),
               ((b, lq_rounded, h, d_rounded), torch.float32)]
    if hk != h:
        buffers += [((b, lk, h, d), query.dtype)] * 2
    return buffers


SCRATCH = {}
_op = getattr(aten, "_scaled_dot_product_flash_attention_backward", None)  # torch 2.x
if _op is not None:
    SCRATCH[_op.default] = flash_backward
