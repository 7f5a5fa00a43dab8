// Pass: a batched GEMM's operand copies as CUDA makes them (issue 34, difference 7).
//
// cuBLAS's strided-batched GEMM reads each operand as one strided batch of matrices with
// non-zero leading dimensions. An operand it cannot read so (an expanded, stride-0 gradient:
// `output.sum().backward()` through `bmm`) is copied whole, once, into a contiguous tensor
// (prepare_batch_matrix_for_cublas in aten/src/ATen/native/cuda/Blas.cpp, `clone`) after
// the op has allocated its output, and freed when the op returns. The CPU's bmm instead
// multiplies slice by slice and copies each slice that its BLAS cannot read, so the exact
// capture shows, just before the output (the recorder writes a GEMM's output after its
// scratch, docs/capture.md), B alloc/free pairs of one slice's size in the same op run.
//
// Those pairs become one copy of B slices, allocated right after the output and freed right
// after it (the cuBLAS workspace, inserted later, goes between them when it is the handle's
// first GEMM: its context is nested in the GEMM's, as the GPU's clone is).
#pragma once

#include "analysis/workload.h"

#include <cstdint>

namespace xmem::analysis
{

struct GemmCopyStats {
    uint64_t merged = 0; // GEMM calls whose per-slice copies were merged
    uint64_t slices = 0; // per-slice copies removed
};

GemmCopyStats merge_batched_gemm_copies(Workload &work);

} // namespace xmem::analysis
