"""The copies cuBLAS's batched GEMM makes of operands it cannot read in place, for fast mode.

`bmm`, `baddbmm` (and `matmul` of 3-D operands, which folds to them) run
`baddbmm_out_cuda_impl` (aten/src/ATen/native/cuda/Blas.cpp) on a GPU. It first picks the
result's layout: column-major (`transpose_result` false) when strides[1] is 1, row-major
(`transpose_result` true) when strides[2] is 1, else a contiguous clone of the transposed
result. Then `prepare_batch_matrix_for_cublas` takes each operand as it is when one of its two
inner strides is 1 and the other a valid leading dimension, and otherwise clones it
contiguous (`tensor.clone(at::MemoryFormat::Contiguous)`), a clone the function owns until it
returns. An expanded gradient (strides[1] or [2] of 0: the gradient of `sum()` or of a
broadcast) always takes the clone, `B·m·n·e` once; a stride-0 batch dimension does not. The
CPU's bmm works slice by slice and copies each slice instead: the exact capture's analysis
turns those copies into this one (simulator/analysis/gemm_copies.cpp); a Meta kernel copies
nothing, so fast mode adds what this returns.

`copies(result, batch1, batch2)` is the one decision: the (shape, dtype) of each clone, in the
order the CUDA function allocates them, after the result (a structured kernel's output
exists before its implementation runs); all are freed when it returns.
"""


def _usable(strides, fast, leading, rows):
    """Whether cuBLAS reads the matrix as it is with FAST as its unit-stride dimension."""
    return strides[fast] == 1 and strides[leading] >= max(1, rows)


def _operand_copy(t, transpose_result, m, n):
    """prepare_batch_matrix_for_cublas: T's (shape, dtype) when it is cloned, else None."""
    fast, leading = (2, 1) if transpose_result else (1, 2)
    s = t.stride()
    if _usable(s, fast, leading, m) or _usable(s, leading, fast, n):
        return None
    if t.is_contiguous() and s[1] != 0 and s[2] != 0:
        return None
    return tuple(t.shape), t.dtype


def copies(result, batch1, batch2):
    """[(shape, dtype)] of the clones baddbmm_out_cuda_impl makes for RESULT = BATCH1 @ BATCH2
    (all 3-D): the result's own when its layout is unusable, then the operands'."""
    if result.numel() == 0 or batch1.size(2) == 0:
        return []  # the pathological cases return before any copy
    sizes, strides = result.shape, result.stride()
    made = []
    if strides[1] == 1 and (sizes[2] == 1 or strides[2] >= max(1, sizes[1])):
        transpose_result = False
    elif strides[2] == 1 and (sizes[1] == 1 or strides[1] >= max(1, sizes[2])):
        transpose_result = True
    else:
        transpose_result = False
        made.append((tuple(sizes), result.dtype))
    leading = 1 if transpose_result else 2
    m, n = sizes[2 if transpose_result else 1], sizes[leading]
    k = (batch2 if transpose_result else batch1).shape[leading]
    first, second = (batch2, batch1) if transpose_result else (batch1, batch2)
    for operand, rows, cols in ((first, m, k), (second, k, n)):
        copy = _operand_copy(operand, transpose_result, rows, cols)
        if copy is not None:
            made.append(copy)
    return made
