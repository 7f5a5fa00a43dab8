#include "analysis/attribution.h"

#include <algorithm>
#include <unordered_map>

namespace xmem::analysis
{

namespace
{

// `MODULE|OUTER>INNER`: the module path, or what else made the storage.
std::string module_name(std::string_view ctx, Category category)
{
    if (ctx.substr(0, k_xmem_ctx_prefix.size()) == k_xmem_ctx_prefix)
        return "(inserted by xmem)";
    std::string_view module = ctx.substr(0, ctx.find('|'));
    if (module.empty())
        return std::string("(") + category_name(category) + ", no module)";
    return std::string(module);
}

// The innermost op: INNER when there is one, else OUTER.
std::string_view op_name(std::string_view ctx)
{
    size_t bar = ctx.find('|');
    std::string_view ops = bar == std::string_view::npos ? ctx : ctx.substr(bar + 1);
    size_t nested = ops.rfind('>');
    std::string_view op = nested == std::string_view::npos ? ops : ops.substr(nested + 1);
    return op.empty() ? "(no op)" : op;
}

} // namespace

AttributionTracker::AttributionTracker(const Workload &work,
                                       const std::vector<Category> &categories)
    : m_module_of(work.events.size(), 0), m_op_of(work.events.size(), 0)
{
    for (size_t i = 0; i < work.events.size(); ++i) {
        const TraceEvent &ev = work.events[i];
        if (ev.kind != EventKind::alloc)
            continue;
        std::string_view ctx = work.ctx_text(ev.ctx);
        m_module_of[i] = group_of(m_modules, module_name(ctx, categories[i]));
        m_op_of[i] = group_of(m_ops, op_name(ctx));
    }
}

uint32_t AttributionTracker::group_of(Groups &g, std::string_view name)
{
    auto [it, added] = g.by_name.emplace(std::string(name), g.names.size());
    if (!added)
        return it->second;
    g.names.emplace_back(name);
    g.live.push_back(0);
    g.at_peak.push_back(0);
    return static_cast<uint32_t>(g.names.size() - 1);
}

uint32_t AttributionTracker::module_group(const std::string &name) const
{
    auto it = m_modules.by_name.find(name);
    return it == m_modules.by_name.end() ? k_no_group : it->second;
}

void AttributionTracker::on_alloc(uint64_t index, uint64_t bytes)
{
    m_modules.live[m_module_of[index]] += bytes;
    m_ops.live[m_op_of[index]] += bytes;
}

void AttributionTracker::on_free(uint64_t index, uint64_t bytes)
{
    m_modules.live[m_module_of[index]] -= bytes;
    m_ops.live[m_op_of[index]] -= bytes;
}

void AttributionTracker::remember_peak()
{
    m_modules.at_peak = m_modules.live;
    m_ops.at_peak = m_ops.live;
}

Ranking AttributionTracker::rank(const Groups &g, size_t top)
{
    std::vector<Share> all;
    for (size_t i = 0; i < g.names.size(); ++i)
        if (g.at_peak[i])
            all.push_back({g.names[i], g.at_peak[i]});
    std::stable_sort(all.begin(), all.end(),
                     [](const Share &a, const Share &b) { return a.bytes > b.bytes; });
    Ranking r;
    for (size_t i = 0; i < all.size(); ++i) {
        if (i < top) {
            r.top.push_back(all[i]);
        } else {
            r.rest_bytes += all[i].bytes;
            ++r.rest_count;
        }
    }
    return r;
}

Attribution AttributionTracker::at_peak(size_t top) const
{
    return {rank(m_modules, top), rank(m_ops, top)};
}

} // namespace xmem::analysis
