#include "replay/replay_loop.h"

#include "trace/flat_map.h"

namespace xmem::replay
{

namespace
{

using trace::Device;
using trace::EventKind;
using trace::TraceEvent;

struct LiveBlock {
    uint64_t ptr = 0;
    uint64_t bytes = 0;
    uint32_t tag = 0;
};

class ReplayLoop
{
  public:
    ReplayLoop(sim::DeviceCachingAllocator &allocator, const ReplayOptions &options,
               timeline::TimelineRecorder *timeline, ReplayObserver *observer)
        : m_allocator(allocator), m_options(options), m_timeline(timeline), m_observer(observer)
    {
    }

    Result<ReplayCounts> run(EventSource &source)
    {
        const sim::DeviceStats &stats = m_allocator.stats();
        const auto all = static_cast<size_t>(sim::StatType::aggregate);
        TraceEvent ev;
        for (uint64_t index = 0;; ++index) {
            Result<bool> more = source.next(ev);
            if (!more.ok())
                return Result<ReplayCounts>::fail(more.error());
            if (!more.value())
                break;
            m_counts.events = index + 1;
            Result<void> applied = apply(ev, index);
            if (!applied.ok())
                return Result<ReplayCounts>::fail(refused(ev, applied.error().message));
            auto allocated = static_cast<uint64_t>(stats.allocated_bytes[all].current);
            auto reserved = static_cast<uint64_t>(stats.reserved_bytes[all].current);
            if (m_timeline)
                m_timeline->sample(index, allocated, reserved);
            if (m_observer)
                m_observer->after_event(index, allocated, reserved);
            if (m_counts.oom)
                break;
        }
        return Result<ReplayCounts>::ok(std::move(m_counts));
    }

  private:
    Result<void> apply(const TraceEvent &ev, uint64_t index)
    {
        switch (ev.kind) {
        case EventKind::alloc:
            return alloc(ev, index);
        case EventKind::free:
            return free(ev, index);
        case EventKind::record_stream: {
            LiveBlock *block = m_live.find(ev.id);
            if (!block)
                return Result<void>::success();
            ++m_counts.gpu_calls;
            return m_allocator.record_stream(block->ptr, ev.stream);
        }
        case EventKind::empty_cache:
            ++m_counts.gpu_calls;
            m_allocator.empty_cache();
            return Result<void>::success();
        case EventKind::set_fraction:
            ++m_counts.gpu_calls;
            return m_allocator.set_memory_fraction(ev.fraction);
        case EventKind::iteration:
            if (m_observer)
                m_observer->on_iteration(index, ev.iteration);
            if (m_timeline)
                m_timeline->mark(index, timeline::MarkerKind::step,
                                 "step " + std::to_string(ev.iteration));
            return Result<void>::success();
        case EventKind::phase:
            if (m_timeline && (m_options.mark_repeated_phases || ev.phase != m_phase))
                m_timeline->mark(index, timeline::MarkerKind::phase, trace::phase_name(ev.phase));
            m_phase = ev.phase;
            return Result<void>::success();
        }
        return Result<void>::success();
    }

    Result<void> alloc(const TraceEvent &ev, uint64_t index)
    {
        if (ev.dev != Device::gpu)
            return Result<void>::success();
        ++m_counts.gpu_calls;
        ++m_counts.mallocs;
        sim::MallocResult r = m_allocator.malloc(ev.bytes, ev.stream);
        if (!r.ok) {
            m_counts.oom = OomReport{ev.bytes, r.alloc_size, r.oom_message, index, ev.line};
            return Result<void>::success();
        }
        uint32_t tag = m_observer ? m_observer->on_alloc(index, ev) : 0;
        m_live.insert(ev.id, LiveBlock{r.ptr, ev.bytes, tag});
        return Result<void>::success();
    }

    Result<void> free(const TraceEvent &ev, uint64_t index)
    {
        LiveBlock block;
        if (!m_live.erase(ev.id, &block))
            return Result<void>::success();
        ++m_counts.gpu_calls;
        if (m_observer)
            m_observer->on_free(index, block.bytes, block.tag);
        return m_allocator.free(block.ptr);
    }

    std::string refused(const TraceEvent &ev, const std::string &why) const
    {
        if (m_options.trace_name.empty())
            return why;
        return "xmem: " + m_options.trace_name + ":" + std::to_string(ev.line) +
               ": the simulator refused this event: " + why;
    }

    sim::DeviceCachingAllocator &m_allocator;
    const ReplayOptions &m_options;
    timeline::TimelineRecorder *m_timeline;
    ReplayObserver *m_observer;
    trace::FlatMap<LiveBlock> m_live; // live GPU storage id -> its block
    trace::Phase m_phase = trace::Phase::setup;
    ReplayCounts m_counts;
};

} // namespace

Result<ReplayCounts> replay_events(EventSource &source, sim::DeviceCachingAllocator &allocator,
                                   const ReplayOptions &options,
                                   timeline::TimelineRecorder *timeline, ReplayObserver *observer)
{
    ReplayLoop loop(allocator, options, timeline, observer);
    return loop.run(source);
}

} // namespace xmem::replay
