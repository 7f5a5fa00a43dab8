#include "analysis/grad_lifetime.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace xmem::analysis
{

namespace
{

struct Live {
    uint64_t id;
    uint64_t bytes;
};

bool capture_kept_gradients(const Workload &work)
{
    std::string_view flag = work.meta_value("zero_grad_set_to_none");
    if (flag == "1")
        return false;
    if (flag == "0")
        return true;
    auto capture = sim::TorchVersion::parse(work.meta_value("torch"));
    return capture.ok() && capture.value().major < 2;
}

bool has_phase(const Workload &work, Phase phase)
{
    for (const TraceEvent &ev : work.events)
        if (ev.kind == EventKind::phase && ev.phase == phase)
            return true;
    return false;
}

// Indexes of the backward allocs of iteration `it` that stand for the gradients: matched
// greedily, in order, by size among storages freed before the backward ends.
std::vector<size_t> match_buffers(const Workload &work, uint32_t it,
                                  const std::vector<uint64_t> &grad_sizes)
{
    const auto &events = work.events;
    std::unordered_map<uint64_t, size_t> open; // id -> alloc index
    std::vector<size_t> freed_in_backward;     // alloc indexes, in allocation order
    std::vector<bool> is_freed(events.size(), false);
    std::vector<size_t> allocs;
    for (size_t i = 0; i < events.size(); ++i) {
        const TraceEvent &ev = events[i];
        if (ev.iteration != it || ev.phase != Phase::backward)
            continue;
        if (ev.kind == EventKind::alloc) {
            open[ev.id] = i;
            allocs.push_back(i);
        } else if (ev.kind == EventKind::free) {
            auto o = open.find(ev.id);
            if (o != open.end())
                is_freed[o->second] = true;
        }
    }
    std::vector<size_t> matched;
    size_t next = 0;
    for (uint64_t bytes : grad_sizes) {
        while (next < allocs.size() &&
               !(events[allocs[next]].bytes == bytes && is_freed[allocs[next]]))
            ++next;
        if (next == allocs.size())
            break;
        matched.push_back(allocs[next++]);
    }
    return matched;
}

} // namespace

std::vector<size_t> backward_survivors(const Workload &work, uint32_t iteration)
{
    std::unordered_map<uint64_t, size_t> live; // id -> alloc index
    for (size_t i = 0; i < work.events.size(); ++i) {
        const TraceEvent &ev = work.events[i];
        if (ev.iteration > iteration || (ev.iteration == iteration && ev.kind == EventKind::phase &&
                                         ev.phase != Phase::backward && !live.empty()))
            break;
        if (ev.iteration == iteration && ev.kind == EventKind::alloc &&
            ev.phase == Phase::backward && ev.dev == Device::gpu)
            live[ev.id] = i;
        else if (ev.kind == EventKind::free)
            live.erase(ev.id);
    }
    std::vector<size_t> indexes;
    for (auto &[id, idx] : live)
        indexes.push_back(idx);
    std::sort(indexes.begin(), indexes.end());
    return indexes;
}

GradStats apply_target_zero_grad(Workload &work, sim::TorchVersion target)
{
    GradStats stats;
    if (target.major < 2) {
        stats.reason = "target keeps gradients (1.x zero_grad sets them to zero)";
        return stats;
    }
    if (!capture_kept_gradients(work)) {
        stats.reason = "capture already set gradients to None";
        return stats;
    }
    if (!has_phase(work, Phase::zero_grad)) {
        stats.reason = "no zero_grad in the capture: gradients kept as captured";
        return stats;
    }
    std::vector<size_t> first_grads = backward_survivors(work, 1);
    std::vector<uint64_t> grad_sizes;
    for (size_t idx : first_grads) {
        grad_sizes.push_back(work.events[idx].bytes);
        stats.gradient_bytes += work.events[idx].bytes;
    }
    stats.gradients = grad_sizes.size();

    // Alloc indexes that become gradients: iteration 1's persistent ones and, in later
    // iterations, the matched buffers (whose captured frees are dropped below).
    std::unordered_set<size_t> promote(first_grads.begin(), first_grads.end());
    uint32_t last_iteration = work.events.empty() ? 0 : work.events.back().iteration;
    for (uint32_t it = 2; it <= last_iteration; ++it)
        for (size_t idx : match_buffers(work, it, grad_sizes))
            promote.insert(idx);

    std::vector<TraceEvent> out;
    out.reserve(work.events.size() + 2 * grad_sizes.size() * (last_iteration + 1));
    std::vector<Live> current;                      // gradients alive now (fresh ids)
    std::unordered_map<uint64_t, uint64_t> renamed; // captured id -> fresh id, while live
    for (size_t i = 0; i < work.events.size(); ++i) {
        TraceEvent ev = work.events[i];
        if (ev.kind == EventKind::phase && ev.phase == Phase::zero_grad) {
            out.push_back(ev);
            for (const Live &g : current)
                out.push_back(make_free(g.id, g.bytes, ev));
            current.clear();
            continue;
        }
        if (ev.kind == EventKind::alloc) {
            if (promote.count(i)) {
                uint64_t fresh = work.fresh_id();
                renamed[ev.id] = fresh;
                ev.id = fresh;
                current.push_back({fresh, ev.bytes});
                if (ev.iteration > 1)
                    ++stats.promoted;
            }
        } else if (ev.kind == EventKind::free || ev.kind == EventKind::record_stream) {
            auto r = renamed.find(ev.id);
            if (r != renamed.end()) {
                if (ev.kind == EventKind::free) {
                    renamed.erase(r); // the captured free ends the buffer: now a gradient
                    continue;
                }
                ev.id = r->second;
            }
        }
        out.push_back(ev);
    }
    work.events = std::move(out);
    stats.applied = true;
    stats.reason = "capture kept gradients (set_to_none=False); rewritten to the target's "
                   "set_to_none=True";
    return stats;
}

} // namespace xmem::analysis
