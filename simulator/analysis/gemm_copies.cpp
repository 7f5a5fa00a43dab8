#include "analysis/gemm_copies.h"

#include "analysis/ops.h"

#include <vector>

namespace xmem::analysis
{

namespace
{

bool is_batched_gemm_output(std::string_view ctx)
{
    std::string_view op = innermost_op(ctx);
    return (op == "aten::bmm" || op == "aten::baddbmm") && is_gemm_output(ctx);
}

// A slice copy of the CPU's bmm: a device tensor factory directly under the op run's outer
// call (`NODE>aten::empty`), freed by the next event.
bool is_slice_copy(const Workload &work, const TraceEvent &a, const TraceEvent &f)
{
    if (a.kind != EventKind::alloc || a.dev != Device::gpu || f.kind != EventKind::free ||
        f.id != a.id)
        return false;
    std::string_view ctx = work.ctx_text(a.ctx);
    std::string_view op = innermost_op(ctx);
    return (op == "aten::empty" || op == "aten::empty_strided") &&
           outer_call(ctx).size() + op.size() + 1 == ctx.size();
}

} // namespace

GemmCopyStats merge_batched_gemm_copies(Workload &work)
{
    GemmCopyStats stats;
    std::vector<TraceEvent> &ev = work.events;
    std::vector<TraceEvent> out;
    out.reserve(ev.size());
    for (size_t i = 0; i < ev.size(); ++i) {
        const TraceEvent &e = ev[i];
        std::string_view ctx = work.ctx_text(e.ctx);
        if (e.kind != EventKind::alloc || e.dev != Device::gpu || !is_batched_gemm_output(ctx)) {
            out.push_back(e);
            continue;
        }
        // Count the pairs just before this output (already copied to `out`): same size, same
        // outer call as the GEMM.
        size_t pairs = 0;
        uint64_t slice = 0;
        while (out.size() >= 2 * (pairs + 1)) {
            const TraceEvent &a = out[out.size() - 2 * (pairs + 1)];
            const TraceEvent &f = out[out.size() - 2 * pairs - 1];
            if (!is_slice_copy(work, a, f) || outer_call(work.ctx_text(a.ctx)) != outer_call(ctx) ||
                (pairs && a.bytes != slice))
                break;
            slice = a.bytes;
            ++pairs;
        }
        if (pairs < 2) {
            out.push_back(e);
            continue;
        }
        out.resize(out.size() - 2 * pairs);
        out.push_back(e);
        uint64_t id = work.fresh_id();
        uint64_t copy_ctx = work.intern(std::string(ctx) + ">aten::clone");
        out.push_back(make_alloc(id, pairs * slice, copy_ctx, e));
        out.push_back(make_free(id, pairs * slice, e));
        ++stats.merged;
        stats.slices += pairs;
    }
    ev = std::move(out);
    return stats;
}

} // namespace xmem::analysis
