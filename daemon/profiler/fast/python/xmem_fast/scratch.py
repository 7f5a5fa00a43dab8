"""Buffers a CUDA kernel allocates for itself and frees before it returns.

A Meta kernel returns the op's outputs only; where the CUDA kernel also takes scratch
memory from the caching allocator while it runs, that transient raises the peak on a GPU.
Each entry gives, from the op's arguments, the (shape, dtype) of each such buffer; the
storage tracker allocates them before the outputs and frees them at the next op boundary.

Flash attention's backward: xmem_gpu/flash.py, the rule the exact capture applies too. The
memory-efficient and cuDNN backward kernels' own scratch is not modelled.
"""
import torch
from xmem_gpu import flash

aten = torch.ops.aten


def flash_backward(grad_out, query, key, value, *rest):
    return flash.backward_scratch(query, key)


SCRATCH = {}
_op = getattr(aten, "_scaled_dot_product_flash_attention_backward", None)  # torch 2.x
if _op is not None:
    SCRATCH[_op.default] = flash_backward
