// What an allocation's context (module path and op chain, "a.b|aten::x>aten::y") says
// about the kernel that made it. Every rule of the analysis that looks at op names asks
// here, so the op lists live in one place (ops.cpp) with the reason for each entry.
#pragma once

#include "analysis/workload.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace xmem::analysis
{

// Last component of the op chain, e.g. "aten::addmm" ("" if none).
std::string_view innermost_op(std::string_view ctx);
// The module and outermost op, "conv1|aten::conv2d" of "conv1|aten::conv2d>aten::empty":
// the call a CUDA run makes too, whatever the CPU kernel does inside it.
std::string_view outer_call(std::string_view ctx);

// The result of a cuBLAS GEMM on CUDA: the innermost op is a matrix product (or a tensor
// factory it called directly), so this allocation is the output its kernel allocates before
// it calls cuBLAS (where the per-handle cuBLAS workspace is created at first use).
bool is_gemm_output(std::string_view ctx);

// Each predicate below is true if any component of the chain matches.

// A matmul that 2.x routes through cuBLASLt (addmm with a bias: Linear with bias).
bool is_cublaslt_op(std::string_view ctx);
// A forward convolution (cuDNN on CUDA).
bool is_conv_forward_op(std::string_view ctx);
// A convolution backward (cuDNN backward-data/backward-filter on CUDA).
bool is_conv_backward_op(std::string_view ctx);
// A batch norm's backward node (`NativeBatchNormBackward0`, `native_batch_norm_backward`).
bool is_batch_norm_backward_op(std::string_view ctx);
// The autograd engine summing two gradients for one input (InputBuffer::accumulate, an
// aten::add): it runs inside the producing node's evaluate_function and carries its context,
// but is not that node's kernel (a ConvolutionBackward0's context, say, yet no cuDNN pass).
bool is_grad_accumulation(std::string_view ctx);
// An op whose CUDA kernel allocates only its outputs (plus workspaces xmem models
// separately), so a temporary the CPU kernel allocated and freed inside it is CPU-only:
// oneDNN reorders, mkldnn weight/input copies, im2col buffers of slow_conv2d. Result
// buffers made through an ATen factory (innermost op aten::empty*) are not: 1.13's
// AccumulateGrad frees the incoming grad_weight right after the op, inside its run.
bool is_cpu_only_temporary_op(std::string_view ctx);
// A copy the CPU's TensorIterator makes of a pointwise op's input of another dtype, cast to
// the common dtype before the op runs (fp32 x + bf16 y under autocast): it reads
// `OP>aten::empty_strided`, made by a dispatched .to(), while the op's own output, allocated
// without a dispatched factory, reads `OP`. CUDA kernels cast while they load their inputs,
// so a GPU run makes no such copy. In a backward node of such an op (`DivBackward0`) the
// copy reads `NODE>aten::empty_strided`: the engine's frame is the only one around it.
bool is_cpu_dtype_promotion(std::string_view ctx);
// A 0-d host scalar wrapped as a tensor on the CPU: in-place ops (`add_(1)` of
// num_batches_tracked), scalar_tensor/lift_fresh/item, optimizer step counters.
bool is_host_scalar_ctx(std::string_view ctx);

// Small ids for outer_call(ctx), memoised per context id. Two allocations belong to the same
// "op run" when consecutive allocations share the key (no phase/iteration mark between).
class OpRunKeys
{
  public:
    explicit OpRunKeys(const Workload &work) : m_work(work) {}
    uint64_t key(uint64_t ctx);

  private:
    const Workload &m_work;
    std::unordered_map<uint64_t, uint64_t> m_by_ctx;
    std::unordered_map<std::string, uint64_t> m_by_text;
};

} // namespace xmem::analysis
