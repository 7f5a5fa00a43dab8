#include "analysis/optimizer_foreach.h"

#include "analysis/cpu_filter.h"
#include "analysis/grad_lifetime.h"
#include "analysis/ops.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace xmem::analysis
{

namespace
{

struct StepScan {
    std::string optimizer;
    bool loops = true;         // no _foreach_ op seen in any step
    bool weight_decay = false; // non-in-place aten::add temporaries seen
};

// Alloc indexes of step temporaries: > 8 B, made and freed inside the same optimizer phase.
std::unordered_set<size_t> step_temporaries(const Workload &work)
{
    std::unordered_set<size_t> temps;
    std::unordered_map<uint64_t, size_t> live;
    for (size_t i = 0; i < work.events.size(); ++i) {
        const TraceEvent &ev = work.events[i];
        if (ev.kind == EventKind::alloc && ev.phase == Phase::optimizer && ev.dev == Device::gpu &&
            ev.bytes > k_host_scalar_max_bytes)
            live[ev.id] = i;
        else if (ev.kind == EventKind::free) {
            auto it = live.find(ev.id);
            if (it == live.end())
                continue;
            const TraceEvent &a = work.events[it->second];
            if (ev.phase == Phase::optimizer && ev.iteration == a.iteration)
                temps.insert(it->second);
            live.erase(it);
        } else if (ev.kind == EventKind::phase) {
            live.clear(); // what outlives the step is state, not a temporary
        }
    }
    return temps;
}

StepScan scan_steps(const Workload &work, const std::unordered_set<size_t> &temps)
{
    StepScan scan;
    for (size_t i = 0; i < work.events.size(); ++i) {
        const TraceEvent &ev = work.events[i];
        if (ev.kind != EventKind::alloc || ev.phase != Phase::optimizer)
            continue;
        std::string_view ctx = work.ctx_text(ev.ctx);
        if (scan.optimizer.empty())
            scan.optimizer = optimizer_class(ctx);
        if (ctx.find("_foreach_") != std::string_view::npos)
            scan.loops = false;
        if (temps.count(i) && innermost_op(ctx) == "aten::add")
            scan.weight_decay = true;
    }
    return scan;
}

int lists_for(const StepScan &s)
{
    int base;
    if (s.optimizer == "Adam" || s.optimizer == "RMSprop")
        base = 1;
    else if (s.optimizer == "AdamW")
        return 1; // decoupled decay: in place on the parameters
    else if (s.optimizer == "Adagrad")
        base = 2;
    else if (s.optimizer == "SGD")
        base = 0;
    else
        return -1;
    return base + (s.weight_decay ? 1 : 0);
}

} // namespace

std::string optimizer_class(std::string_view ctx)
{
    constexpr std::string_view tag = "Optimizer.step#";
    size_t at = ctx.find(tag);
    if (at == std::string_view::npos)
        return "";
    std::string_view rest = ctx.substr(at + tag.size());
    return std::string(rest.substr(0, rest.find('.')));
}

ForeachStats apply_target_foreach(Workload &work, sim::TorchVersion target)
{
    ForeachStats stats;
    auto capture = sim::TorchVersion::parse(work.meta_value("torch"));
    if (target.major < 2 || !capture.ok() || capture.value().major >= 2)
        return stats;
    std::unordered_set<size_t> temps = step_temporaries(work);
    StepScan scan = scan_steps(work, temps);
    stats.optimizer = scan.optimizer;
    int lists = lists_for(scan);
    if (!scan.loops || lists < 0)
        return stats;
    std::vector<uint64_t> params;
    for (size_t idx : backward_survivors(work, 1))
        params.push_back(work.events[idx].bytes);
    stats.lists = static_cast<unsigned>(lists);
    for (uint64_t b : params)
        stats.list_bytes += b;

    uint64_t ctx = work.intern("xmem|foreach_temporaries|" + scan.optimizer);
    std::vector<TraceEvent> out;
    out.reserve(work.events.size() + 2 * params.size() * lists * 4);
    std::unordered_set<uint64_t> dropped_ids;
    std::vector<std::pair<uint64_t, uint64_t>> open; // (id, bytes) of the inserted lists
    TraceEvent last_in_step;                         // frees belong to the step
    auto close_step = [&]() {
        for (auto &[id, bytes] : open)
            out.push_back(make_free(id, bytes, last_in_step));
        open.clear();
    };
    bool in_step = false, inserted = false;
    for (size_t i = 0; i < work.events.size(); ++i) {
        const TraceEvent &ev = work.events[i];
        if (ev.kind == EventKind::phase || ev.kind == EventKind::iteration) {
            if (in_step)
                close_step();
            in_step = ev.kind == EventKind::phase && ev.phase == Phase::optimizer;
            inserted = false;
        }
        if (in_step)
            last_in_step = ev;
        if (ev.kind == EventKind::alloc && temps.count(i)) {
            dropped_ids.insert(ev.id);
            ++stats.temporaries_replaced;
            if (!inserted) {
                inserted = true;
                for (int l = 0; l < lists; ++l)
                    for (uint64_t b : params) {
                        uint64_t id = work.fresh_id();
                        out.push_back(make_alloc(id, b, ctx, ev));
                        open.emplace_back(id, b);
                    }
            }
            continue;
        }
        if ((ev.kind == EventKind::free || ev.kind == EventKind::record_stream) &&
            dropped_ids.count(ev.id)) {
            if (ev.kind == EventKind::free)
                dropped_ids.erase(ev.id);
            continue;
        }
        out.push_back(ev);
    }
    close_step();
    work.events = std::move(out);
    stats.applied = true;
    return stats;
}

} // namespace xmem::analysis
