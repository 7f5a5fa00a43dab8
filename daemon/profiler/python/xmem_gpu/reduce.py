"""Reduction staging on a GPU, for both captures: what `sum` and `mean` allocate for themselves.

A CUDA `sum` or `mean` runs `gpu_reduce_kernel` (aten/src/ATen/native/cuda/Reduce.cuh). When
`setReduceConfig` splits the reduced dimension across thread blocks ("global reduce"), the
kernel takes two buffers from the caching allocator, after the output exists, and drops both
once the kernel is queued (local `DataPtr`s, the semaphores first):

* `buffer`: `global_memory_size()`, sizeof(acc) x outputs x blocks per output, times the
  block's width x output vector size when the reduced dimension is not the fastest-moving
  one (a bias gradient: the column sum of `[N, C]`, tens of MB at N = 1664);
* `semaphores`: 4 B per block column (`semaphore_size()`).

The CPU and Meta kernels allocate neither. Whether a reduction splits depends on the target
GPU's multiprocessor count and threads per multiprocessor (`target.py`); without a count
(a catalog entry that has none) nothing is added. The rule below is torch 2.6's
`setReduceConfig`, read line by line, on the TensorIterator layout of one input and one
output. Left out: inputs past 32-bit indexing (the kernel splits them into sub-iterators)
and the 16-bit accumulation buffer those need, ROCm's own splitting, and the other reductions
(`amax`, `norm`, `var`, `prod`, ...), which run the same kernel with other accumulators.
"""
import torch

from . import target
from .index_put import ALLOC, FREE

_MAX_THREADS = 512  # mnt_wrapper<scalar_t>::MAX_NUM_THREADS (256 for complex double)
_WARP = 32
_INPUT_VEC = 4  # ReduceConfig::input_vec_size; vt0 is 4 for sum and mean
_MIN_VALUES, _MAX_VALUES = 16, 256  # setReduceConfig's min/max_values_per_thread


def _div_up(a, b):
    return -(-a // b)


def _last_pow2(n):
    return 1 << (n.bit_length() - 1)


def _acc_size(dtype):
    """sizeof(arg_t) for a result of DTYPE: floating types below 64 bits accumulate in float,
    integer and bool sums (an int64 result) in int64."""
    if dtype.is_complex:
        return 16 if dtype == torch.complex128 else 8
    if dtype.is_floating_point:
        return 8 if dtype == torch.float64 else 4
    return 8


def _layout(shape, strides, reduced):
    """TensorIterator's dimensions for a reduction of one input into a kept-dims output: size-1
    dimensions dropped, reduced dimensions first (reorder_dimensions), each group fastest
    first, neighbours merged where the input's strides allow (coalesce_dimensions).
    [(size, input stride in elements, reduced)], fastest first."""
    dims = [(s, st, d in reduced) for d, (s, st) in enumerate(zip(shape, strides)) if s != 1]
    # reorder_dimensions: a reduced dimension (output stride 0) goes before a kept one; else
    # the smaller input stride first, and on equal strides the smaller size
    dims.sort(key=lambda d: (not d[2], d[1], d[0]))
    merged = []
    for size, stride, red in dims:
        if merged:
            psize, pstride, pred = merged[-1]
            # the output's strides: 0 along reduced dimensions, contiguous along kept ones
            if pred == red and psize * pstride == stride:
                merged[-1] = (psize * size, pstride, red)
                continue
        merged.append((size, stride, red))
    return merged


def _output_vec(layout, num_reduce, offset, itemsize):
    """get_output_vec_size: 4, halved until the input's address, the first kept size and every
    other input stride are multiples of it (blocks from the caching allocator are 512-B
    aligned, so the address is the view's storage offset)."""
    vec = 4
    for n in [offset, layout[num_reduce][0]] + [d[1] for i, d in enumerate(layout) if i != num_reduce]:
        while n % vec:
            vec //= 2
    return vec


def _block(dim0, dim1, output_vec):
    """set_block_dimension: (block width, block height)."""
    max_threads = _MAX_THREADS // output_vec
    d0 = _last_pow2(dim0) if dim0 < max_threads else max_threads
    d1 = _last_pow2(dim1) if dim1 < max_threads else max_threads
    width = min(d0, _WARP)
    height = min(d1, max_threads // width)
    width = min(d0, max_threads // height)
    return width, height


def buffers(self, dims, dtype, multiprocessors, threads_per_multiprocessor):
    """[staging bytes, semaphore bytes] a CUDA `sum`/`mean` of SELF over DIMS (a list of
    dimensions, [] for all) allocates while it runs, or [] when it reduces within blocks."""
    if not multiprocessors or self.numel() == 0 or self.numel() > 2**31 - 1 or self.dim() == 0:
        return []
    reduced = {d % self.dim() for d in dims} if dims else set(range(self.dim()))
    layout = _layout(tuple(self.shape), tuple(self.stride()), reduced)
    if not layout:
        return []
    num_reduce = sum(1 for d in layout if d[2])
    inputs = 1
    for size, _, red in layout:
        inputs *= size if red else 1
    outputs = self.numel() // inputs
    fastest = num_reduce == len(layout) or layout[0][1] < layout[num_reduce][1]
    if fastest:
        dim0, dim1, stride = inputs, outputs, layout[0][1]
    else:
        dim0, dim1, stride = outputs, inputs, layout[num_reduce][1]
    output_vec = 1
    if stride == 1:
        if fastest and dim0 > 128 and num_reduce == 1:
            dim0 //= _INPUT_VEC  # vectorise along the input
        elif not fastest:
            output_vec = _output_vec(layout, num_reduce, self.storage_offset(), self.element_size())
            dim0 //= output_vec
    width, height = _block(dim0, dim1, output_vec)
    step_input = step_output = 1
    if fastest:
        step_input *= width
    else:
        step_output *= width
    split_across_warps = _div_up(inputs, step_input) >= min(height * 16, _MAX_VALUES)
    if split_across_warps:
        step_input *= height
    else:
        step_output *= height
    grid_x = _div_up(outputs // output_vec, step_output)
    target = multiprocessors * (threads_per_multiprocessor // (width * height))
    values = _div_up(inputs, step_input)
    if not (split_across_warps and values >= _MAX_VALUES and grid_x <= target):
        return []
    ctas = max(min(_div_up(target, grid_x), _div_up(values, _MIN_VALUES)),
               _div_up(values, _MAX_VALUES))
    if ctas <= 1:
        return []
    staging = _acc_size(dtype) * outputs * ctas * (1 if fastest else width * output_vec)
    return [staging, 4 * grid_x]


def program(out, self, dim=None, *rest, **kwargs):
    """index_put.py's steps for `sum`/`mean` (`.default` or `.dim`) of SELF into OUT on the
    target GPU (`target.py`): the staging buffer and the semaphores, allocated after the output,
    the semaphores freed first; [] without a multiprocessor count or a split."""
    multiprocessors = target.multiprocessors()
    if multiprocessors is None or not isinstance(dim, (list, tuple, type(None))):
        return []
    threads = target.threads_per_multiprocessor(target.capability())
    return steps(buffers(self, list(dim or []), out.dtype, multiprocessors, threads))


def steps(sizes):
    """index_put.py's steps for the [staging, semaphore] bytes SIZES of `buffers`: both
    allocated, the semaphores freed first; [] when SIZES is empty."""
    if not sizes:
        return []
    return [(ALLOC, "staging", (sizes[0],), torch.uint8), (ALLOC, "semaphores", (sizes[1],), torch.uint8),
            (FREE, "semaphores"), (FREE, "staging")]
