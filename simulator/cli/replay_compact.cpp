// Compact trace → allocator calls. Host storages (dev=h) stay on the CPU in a GPU run, so
// only dev=g storages are replayed; iteration and phase records become timeline markers.
#include "cli/replay.h"

#include "trace/flat_map.h"

namespace xmem::cli
{

namespace
{

using xmem::trace::Device;
using xmem::trace::EventKind;
using xmem::trace::TraceEvent;

struct CompactReplay {
    xmem::trace::CompactTraceReader &reader;
    xmem::sim::DeviceCachingAllocator &allocator;
    xmem::timeline::TimelineRecorder *timeline;
    xmem::trace::FlatMap<uint64_t> ptr_of_id; // live GPU storage id → simulated address
    ReplayReport report;

    // Returns an error message, or "" to continue; sets report.oom to stop cleanly.
    std::string apply(const TraceEvent &ev, uint64_t index);
    std::string internal(const TraceEvent &ev, const std::string &what)
    {
        return "xmem: " + reader.name() + ":" + std::to_string(ev.line) +
               ": the simulator refused this event: " + what;
    }
};

std::string CompactReplay::apply(const TraceEvent &ev, uint64_t index)
{
    switch (ev.kind) {
    case EventKind::alloc: {
        if (ev.dev != Device::gpu)
            return "";
        ++report.gpu_calls;
        xmem::sim::MallocResult r = allocator.malloc(ev.bytes, ev.stream);
        if (!r.ok) {
            report.oom = OomReport{ev.bytes, r.alloc_size, r.oom_message, index, ev.line};
            return "";
        }
        ptr_of_id.insert(ev.id, r.ptr);
        return "";
    }
    case EventKind::free: {
        uint64_t ptr = 0;
        if (ev.dev != Device::gpu || !ptr_of_id.erase(ev.id, &ptr))
            return "";
        ++report.gpu_calls;
        auto freed = allocator.free(ptr);
        return freed.ok() ? "" : internal(ev, freed.error().message);
    }
    case EventKind::record_stream: {
        uint64_t *ptr = ev.dev == Device::gpu ? ptr_of_id.find(ev.id) : nullptr;
        if (!ptr)
            return "";
        ++report.gpu_calls;
        auto recorded = allocator.record_stream(*ptr, ev.stream);
        return recorded.ok() ? "" : internal(ev, recorded.error().message);
    }
    case EventKind::empty_cache:
        ++report.gpu_calls;
        allocator.empty_cache();
        return "";
    case EventKind::set_fraction: {
        ++report.gpu_calls;
        auto set = allocator.set_memory_fraction(ev.fraction);
        return set.ok() ? "" : internal(ev, set.error().message);
    }
    case EventKind::iteration:
        if (timeline)
            timeline->mark(index, xmem::timeline::MarkerKind::iteration,
                           "iteration " + std::to_string(ev.iteration));
        return "";
    case EventKind::phase:
        if (timeline)
            timeline->mark(index, xmem::timeline::MarkerKind::phase,
                           xmem::trace::phase_name(ev.phase));
        return "";
    }
    return "";
}

} // namespace

Result<ReplayReport> replay_compact(xmem::trace::CompactTraceReader &reader,
                                    xmem::sim::DeviceCachingAllocator &allocator,
                                    xmem::timeline::TimelineRecorder *timeline)
{
    CompactReplay replay{reader, allocator, timeline, {}, {}};
    replay.report.format = "compact";
    const xmem::sim::DeviceStats &stats = allocator.stats();
    TraceEvent ev;
    for (uint64_t index = 0;; ++index) {
        Result<bool> more = reader.next(ev);
        if (!more.ok())
            return Result<ReplayReport>::fail(more.error());
        if (!more.value())
            break;
        replay.report.events = index + 1;
        std::string problem = replay.apply(ev, index);
        if (!problem.empty())
            return Result<ReplayReport>::fail(problem);
        if (timeline)
            timeline->sample(index, static_cast<uint64_t>(stats.allocated_bytes[0].current),
                             static_cast<uint64_t>(stats.reserved_bytes[0].current));
        if (replay.report.oom)
            break;
    }
    return Result<ReplayReport>::ok(std::move(replay.report));
}

} // namespace xmem::cli
