// Pass 1 of the analysis: remove what a GPU run would not ask of the device allocator.
//
//   host      `h` storages (DataLoader workers' batches, host staging, pinned buffers);
//   scalar    0-d host scalars the CPU wraps as tensors: <= 8 bytes made in the optimizer
//             step or zero_grad (step counters) or under an in-place/scalar op (the `1` of
//             num_batches_tracked.add_(1)); on CUDA they stay host scalars;
//   cpu_temp  temporaries a CPU kernel allocated and freed inside one op run whose CUDA
//             kernel allocates only its outputs (oneDNN reorders, mkldnn copies, im2col):
//             see is_cpu_only_temporary_op(). An "op run" is a maximal sequence of
//             allocations under the same outer call (module|op), see OpRunKeys.
//             In exact traces also oneDNN's convolution-backward scratch made with
//             at::empty and freed before the node's inputs are (ConvBackwardScratch), and
//             TensorIterator's copies of a pointwise op's inputs cast to the common dtype
//             (is_cpu_dtype_promotion()).
//
// Frees and record_streams of a dropped storage are dropped with it.
#pragma once

#include "analysis/workload.h"

#include <cstdint>

namespace xmem::analysis
{

struct DropCount {
    uint64_t count = 0;
    uint64_t bytes = 0;
    void add(uint64_t b)
    {
        ++count;
        bytes += b;
    }
};

struct FilterStats {
    DropCount host;
    DropCount scalar;
    DropCount cpu_temp;
};

constexpr uint64_t k_host_scalar_max_bytes = 8; // a 0-d int64/double

FilterStats drop_cpu_only(Workload &work);

} // namespace xmem::analysis
