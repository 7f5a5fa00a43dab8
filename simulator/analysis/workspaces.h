// Pass 3: what only a GPU run allocates, for the target PyTorch release and GPU.
//
// cuBLAS (allocator.md 12.4): 2.0+ allocates one workspace per (cuBLAS handle, stream)
//   through the caching allocator at the handle's first GEMM and keeps it. The forward
//   runs on the Python thread and the backward on the autograd device thread, which use
//   different handles: one workspace at the first forward GEMM, one at the first backward
//   GEMM, where the GEMM calls cuBLAS: after its output and the operand copies made inside
//   that op call (docs/estimate.md). 1.13 lets cuBLAS allocate it itself: counted as memory
//   outside the allocator.
// cuBLASLt (allocator.md 12.5): 2.0–2.7 allocate a transient workspace per Lt matmul (addmm with a
//   bias); 2.8–2.9 keep one per (handle, stream); 2.10+ share the cuBLAS workspace.
// cuDNN (allocator.md 12.6): each convolution pass asks for a workspace for its algorithm,
//   allocated after the pass's output and freed when the kernel is queued. xmem inserts a transient
//   block sized from the module's recorded geometry (conv_workspace.h) after the forward's
//   output, after grad_input and after grad_weight. A backward pass has no module (autograd
//   runs it): it is matched to the latest unmatched forward of the iteration whose input or
//   weight has the size of the pass's first output. A job that runs convolutions also loads
//   cuDNN (handle, kernel images): the catalog's cudnn_context_mib, outside the allocator.
// Input batch: if a data phase produced no device storages but host ones that are still
//   alive when the forward starts, the capture did not copy the batch: those host storages
//   are made device storages (they stand for the `.cuda()` copies, alive as long).
#pragma once

#include "allocator/version.h"
#include "analysis/catalog.h"
#include "analysis/workload.h"

#include <cstdint>

namespace xmem::analysis
{

enum class LtWorkspace : uint8_t { none, transient, persistent };

struct WorkspacePolicy {
    uint64_t cublas_bytes = 0;         // per handle, through the caching allocator
    uint64_t cublas_outside_bytes = 0; // 1.13: cuBLAS's own allocation (outside)
    LtWorkspace lt = LtWorkspace::none;
    uint64_t lt_bytes = 0;
    uint64_t cudnn_context_bytes = 0; // outside the allocator once a convolution ran
    double conv_factor = 0;           // conv_workspace.h: the point estimate's
    double conv_bound_factor = 0;     // the limit's: every step above conv_factor up to this
    double conv_bound_step = 0;
    uint64_t conv_cap_bytes = 0;
};

// Why these: docs/estimate.md, "cuDNN workspaces" (chosen on the calibration half of large
// generated CNNs of GPUMemNet; the real models test them).
constexpr double k_conv_workspace_factor = 1.0;
constexpr double k_conv_workspace_bound_factor = 2.5;
constexpr double k_conv_workspace_bound_step = 0.5;
constexpr uint64_t k_conv_workspace_cap_bytes = uint64_t{8} << 30;
constexpr int k_cublas_handles = 2; // forward thread + autograd device thread

WorkspacePolicy workspace_policy(sim::TorchVersion target, const GpuSpec &gpu);

struct WorkspaceStats {
    uint64_t cublas = 0; // workspaces inserted (count)
    uint64_t cublaslt = 0;
    uint64_t cudnn = 0;
    uint64_t cudnn_max_bytes = 0;
    uint64_t input_copies = 0;
    bool uses_cudnn = false;    // a convolution ran: cuDNN's handle and kernels are loaded
    uint64_t outside_bytes = 0; // library memory outside the allocator
};

// Promotes a host-only batch to device storages (see above); returns how many.
uint64_t add_input_copies(Workload &work);
// Inserts the cuBLAS/cuBLASLt/cuDNN allocations of `policy`.
WorkspaceStats add_workspaces(Workload &work, const WorkspacePolicy &policy);

} // namespace xmem::analysis
