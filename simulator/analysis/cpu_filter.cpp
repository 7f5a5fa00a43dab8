#include "analysis/cpu_filter.h"

#include "analysis/ops.h"

#include <unordered_map>
#include <vector>

namespace xmem::analysis
{

namespace
{

enum class Drop : uint8_t { keep, host, scalar, cpu_temp };

bool is_scalar_bookkeeping(const Workload &work, const TraceEvent &ev)
{
    if (ev.bytes > k_host_scalar_max_bytes)
        return false;
    if (ev.phase == Phase::optimizer || ev.phase == Phase::zero_grad)
        return true;
    return is_host_scalar_ctx(work.ctx_text(ev.ctx));
}

// Decides, for every alloc event index, whether the storage stays (or is dropped and why).
std::vector<Drop> decide(const Workload &work)
{
    const auto &events = work.events;
    std::vector<Drop> drop(events.size(), Drop::keep);
    std::unordered_map<uint64_t, size_t> live;    // id -> alloc index
    std::vector<size_t> run_of(events.size(), 0); // alloc index -> op run it started in
    OpRunKeys keys(work);
    size_t run = 0;
    uint64_t run_key = 0;
    bool run_open = false;
    for (size_t i = 0; i < events.size(); ++i) {
        const TraceEvent &ev = events[i];
        switch (ev.kind) {
        case EventKind::alloc:
            if (uint64_t k = keys.key(ev.ctx); !run_open || k != run_key) {
                ++run;
                run_key = k;
                run_open = true;
            }
            run_of[i] = run;
            live[ev.id] = i;
            if (ev.dev == Device::host)
                drop[i] = Drop::host;
            else if (is_scalar_bookkeeping(work, ev))
                drop[i] = Drop::scalar;
            break;
        case EventKind::free: {
            auto it = live.find(ev.id);
            if (it == live.end())
                break;
            size_t a = it->second;
            live.erase(it);
            if (drop[a] == Drop::keep && run_open && run_of[a] == run &&
                is_cpu_only_temporary_op(work.ctx_text(events[a].ctx)))
                drop[a] = Drop::cpu_temp;
            break;
        }
        case EventKind::phase:
        case EventKind::iteration:
            run_open = false; // a phase or iteration boundary ends any op run
            break;
        default:
            break;
        }
    }
    return drop;
}

} // namespace

FilterStats drop_cpu_only(Workload &work)
{
    std::vector<Drop> drop = decide(work);
    FilterStats stats;
    std::unordered_map<uint64_t, bool> dropped_live; // id -> dropped, while live
    std::vector<TraceEvent> out;
    out.reserve(work.events.size());
    for (size_t i = 0; i < work.events.size(); ++i) {
        const TraceEvent &ev = work.events[i];
        if (ev.kind == EventKind::alloc) {
            bool gone = drop[i] != Drop::keep;
            dropped_live[ev.id] = gone;
            if (drop[i] == Drop::host)
                stats.host.add(ev.bytes);
            else if (drop[i] == Drop::scalar)
                stats.scalar.add(ev.bytes);
            else if (drop[i] == Drop::cpu_temp)
                stats.cpu_temp.add(ev.bytes);
            if (gone)
                continue;
        } else if (ev.kind == EventKind::free || ev.kind == EventKind::record_stream) {
            auto it = dropped_live.find(ev.id);
            bool gone = it != dropped_live.end() && it->second;
            if (ev.kind == EventKind::free && it != dropped_live.end())
                dropped_live.erase(it);
            if (gone)
                continue;
        }
        out.push_back(ev);
    }
    work.events = std::move(out);
    return stats;
}

} // namespace xmem::analysis
