"""Buffers a CUDA kernel allocates for itself and frees before it returns.

A Meta kernel returns the op's outputs only; where the CUDA kernel also takes scratch
memory from the caching allocator while it runs, that transient raises the peak on a GPU.
Each entry gives, from the op's arguments, the (shape, dtype) of each such buffer; the
storage tracker allocates them before the outputs and frees them at the next op boundary.

Flash attention's backward: xmem_gpu/flash.py, the rule the exact capture applies too; the
memory-efficient backward's copy of a transposed output gradient: xmem_gpu/efficient.py. The
cuDNN backward kernel's own scratch is not modelled.

AFTER holds the kernels whose scratch comes after their outputs, as steps (xmem_gpu/
index_put.py's form: allocations and frees in the CUDA kernel's order), played when the
outputs are written: cuBLAS's batched GEMM copies of operands it cannot read
(xmem_gpu/gemm.py; the exact capture's analysis makes the same copy from the CPU's
per-slice ones), `index_put_`'s sort with accumulate (xmem_gpu/index_put.py), the staging
of a `sum` or `mean` split across thread blocks (xmem_gpu/reduce.py) and the memory-efficient
attention backward's delta and workspace (xmem_gpu/efficient.py); the exact capture plays the
same steps for the last three.
"""
import torch
from xmem_gpu import efficient, flash, gemm, index_put, reduce

from . import formulas

aten = torch.ops.aten


def flash_backward(grad_out, query, key, value, *rest):
    return flash.backward_scratch(query, key)


def efficient_backward(grad_out, *rest):
    return efficient.gradient_copy(grad_out)


def _efficient_after(out, grad_out, query, key, value, attn_bias, output, logsumexp, seed,
                     offset, dropout_p, *rest, **kwargs):
    return efficient.program(query, key, value, dropout_p)


SCRATCH = {}
_op = getattr(aten, "_scaled_dot_product_flash_attention_backward", None)  # torch 2.x
if _op is not None:
    SCRATCH[_op.default] = flash_backward
_efficient_op = getattr(aten, "_scaled_dot_product_efficient_attention_backward", None)
if _efficient_op is not None:
    SCRATCH[_efficient_op.default] = efficient_backward


def _whole(buffers):
    """Steps for BUFFERS [(shape, dtype)] all freed when the kernel returns (last first)."""
    names = [str(i) for i in range(len(buffers))]
    return ([(index_put.ALLOC, n, shape, dtype) for n, (shape, dtype) in zip(names, buffers)]
            + [(index_put.FREE, n) for n in reversed(names)])


def _bmm(out, self, mat2, *rest, **kwargs):
    return _whole(gemm.copies(out, self, mat2))


def _baddbmm(out, self, batch1, batch2, *rest, **kwargs):
    return _whole(gemm.copies(out, batch1, batch2))


def _index_put(unsafe):
    def steps(out, self, indices, values, accumulate=False, *rest, **kwargs):
        return index_put.program(out, indices, values, accumulate, unsafe=unsafe)
    return steps


def _index_put_impl(out, self, indices, values, accumulate=False, unsafe=False):
    return index_put.program(self, indices, values, accumulate, unsafe)


# op (or formulas.py's in-place twin) -> steps(output, *args, **kwargs)
AFTER = {
    aten.bmm.default: _bmm, aten.bmm.out: _bmm,
    aten.baddbmm.default: _baddbmm, aten.baddbmm_.default: _baddbmm, aten.baddbmm.out: _baddbmm,
    aten._index_put_impl_.default: _index_put_impl,
    aten.index_put_.default: _index_put(unsafe=False),
    aten.index_put.default: _index_put(unsafe=False),
    formulas.index_put_in_place: _index_put(unsafe=True),
    aten.sum.default: reduce.program, aten.sum.dim_IntList: reduce.program,
    aten.mean.default: reduce.program, aten.mean.dim: reduce.program,
}
if _efficient_op is not None:
    AFTER[_efficient_op.default] = _efficient_after
