#include "analysis/ops.h"

#include <initializer_list>

namespace xmem::analysis
{

namespace
{

constexpr std::string_view k_separators = "|>";

// Calls fn on each component ("module|op>op>op"); stops when fn returns true.
template <class Fn> bool any_component(std::string_view ctx, Fn &&fn)
{
    while (!ctx.empty()) {
        size_t bar = ctx.find_first_of(k_separators);
        std::string_view part = ctx.substr(0, bar);
        if (fn(part))
            return true;
        if (bar == std::string_view::npos)
            break;
        ctx.remove_prefix(bar + 1);
    }
    return false;
}

bool is_one_of(std::string_view op, std::initializer_list<std::string_view> names)
{
    for (std::string_view n : names)
        if (op == n)
            return true;
    return false;
}

bool contains(std::string_view text, std::string_view needle)
{
    return text.find(needle) != std::string_view::npos;
}

// In-place ATen ops end in a single '_' ("aten::add_"); dunder names do not count.
bool is_inplace_op(std::string_view op)
{
    return op.substr(0, 6) == "aten::" && op.size() > 7 && op.back() == '_' &&
           op[op.size() - 2] != '_';
}

} // namespace

std::string_view innermost_op(std::string_view ctx)
{
    size_t bar = ctx.find_last_of(k_separators);
    std::string_view last = bar == std::string_view::npos ? ctx : ctx.substr(bar + 1);
    return last.find("::") == std::string_view::npos ? std::string_view() : last;
}

bool is_gemm_output(std::string_view ctx)
{
    // Every entry reaches cublas<t>gemm / gemmStridedBatched (or Lt) on CUDA.
    auto gemm = [](std::string_view op) {
        return is_one_of(op, {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
                              "aten::addbmm", "aten::matmul", "aten::linear", "aten::addmv",
                              "aten::mv", "aten::dot", "aten::vdot", "aten::_addmm_activation",
                              "aten::einsum", "aten::bilinear"});
    };
    std::string_view inner = innermost_op(ctx);
    if (gemm(inner))
        return true;
    if (!is_one_of(inner, {"aten::empty", "aten::empty_strided"}))
        return false;
    ctx.remove_suffix(inner.size() + 1);
    return gemm(innermost_op(ctx));
}

bool is_cublaslt_op(std::string_view ctx)
{
    // at::native addmm_out_cuda_impl takes the gemm_and_bias (cuBLASLt) path for a 1-d
    // bias broadcast over rows, which is what nn.Linear with bias produces.
    return any_component(ctx, [](std::string_view op) {
        return is_one_of(op, {"aten::addmm", "aten::_addmm_activation"});
    });
}

bool is_conv_forward_op(std::string_view ctx)
{
    if (is_conv_backward_op(ctx))
        return false;
    return any_component(ctx, [](std::string_view op) {
        return is_one_of(op, {"aten::convolution", "aten::_convolution", "aten::conv2d",
                              "aten::conv1d", "aten::conv3d", "aten::cudnn_convolution",
                              "aten::mkldnn_convolution", "aten::conv_transpose2d"});
    });
}

bool is_conv_backward_op(std::string_view ctx)
{
    return any_component(ctx, [](std::string_view op) {
        return contains(op, "convolution_backward") || contains(op, "ConvolutionBackward");
    });
}

bool is_batch_norm_backward_op(std::string_view ctx)
{
    return any_component(ctx, [](std::string_view op) {
        return contains(op, "NativeBatchNormBackward") ||
               contains(op, "native_batch_norm_backward");
    });
}

bool is_grad_accumulation(std::string_view ctx)
{
    return contains(ctx, "evaluate_function") && innermost_op(ctx) == "aten::add";
}

bool is_cpu_only_temporary_op(std::string_view ctx)
{
    // An allocation factory inside the op is the CPU kernel making a result buffer (the dense
    // output, grad_input, grad_weight): cuDNN allocates the same buffers. Anything else the
    // CPU convolution allocates is oneDNN's own scratch, reorders and blocked-layout copies.
    std::string_view inner = innermost_op(ctx);
    if (inner.substr(0, 11) == "aten::empty" || inner == "aten::zeros" ||
        inner == "aten::zeros_like")
        return false;
    if (is_conv_forward_op(ctx) || is_conv_backward_op(ctx))
        return true;
    return any_component(ctx, [](std::string_view op) {
        return contains(op, "mkldnn") || contains(op, "onednn") || contains(op, "reorder") ||
               contains(op, "to_dense") || contains(op, "slow_conv") || contains(op, "nnpack");
    });
}

// The ATen op an autograd node of a pointwise op runs ("DivBackward0" -> "aten::div"), ""
// for any other call.
std::string backward_node_op(std::string_view call)
{
    constexpr std::string_view node = "autograd::engine::evaluate_function: ";
    if (call.substr(0, node.size()) != node)
        return "";
    call.remove_prefix(node.size());
    size_t backward = call.rfind("Backward");
    if (backward == std::string_view::npos || backward == 0)
        return "";
    std::string op = "aten::";
    for (char c : call.substr(0, backward))
        op += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return op;
}

bool is_cpu_dtype_promotion(std::string_view ctx)
{
    std::string_view call = outer_call(ctx);
    call.remove_prefix(call.find('|') + 1); // npos + 1 == 0: no module path
    if (innermost_op(ctx) != "aten::empty_strided" || call.find('>') != std::string_view::npos)
        return false;
    // In the backward the engine's frame is the only one around the copy (DivBackward0 of
    // `scores / 4.0` casts the saved scalar `4.0` to the gradient's dtype): the copy sits
    // directly under the node, whose op decides as the forward's does.
    std::string node_op = backward_node_op(call);
    if (!node_op.empty()) {
        if (outer_call(ctx).size() + std::string_view(">aten::empty_strided").size() != ctx.size())
            return false;
        call = node_op;
    }
    if (is_inplace_op(call))
        call.remove_suffix(1);
    return is_one_of(call,
                     {"aten::add",     "aten::sub",         "aten::rsub",      "aten::mul",
                      "aten::div",     "aten::true_divide", "aten::where",     "aten::maximum",
                      "aten::minimum", "aten::pow",         "aten::lerp",      "aten::addcmul",
                      "aten::addcdiv", "aten::fmod",        "aten::remainder", "aten::atan2",
                      "aten::eq",      "aten::ne",          "aten::lt",        "aten::le",
                      "aten::gt",      "aten::ge"});
}

bool is_host_scalar_ctx(std::string_view ctx)
{
    if (contains(ctx, "num_batches_tracked"))
        return true;
    std::string_view op = innermost_op(ctx);
    // No op at all: a Python-level wrap of a number (BatchNorm's num_batches_tracked += 1).
    return op.empty() || is_inplace_op(op) ||
           is_one_of(op, {"aten::scalar_tensor", "aten::lift_fresh", "aten::item",
                          "aten::_local_scalar_dense", "aten::wrapped_scalar_tensor"});
}

} // namespace xmem::analysis

namespace xmem::analysis
{

std::string_view outer_call(std::string_view ctx)
{
    return ctx.substr(0, ctx.find('>'));
}

uint64_t OpRunKeys::key(uint64_t ctx)
{
    auto it = m_by_ctx.find(ctx);
    if (it != m_by_ctx.end())
        return it->second;
    std::string outer(outer_call(m_work.ctx_text(ctx)));
    auto [pos, added] = m_by_text.emplace(outer, m_by_text.size() + 1);
    m_by_ctx.emplace(ctx, pos->second);
    return pos->second;
}

} // namespace xmem::analysis
