#include "analysis/replay.h"

#include "allocator/allocator.h"

#include <algorithm>
#include <unordered_map>

namespace xmem::analysis
{

namespace
{

struct LiveBlock {
    uint64_t ptr;
    uint64_t bytes;
    Category category;
};

class Replayer
{
  public:
    Replayer(const Workload &work, const sim::AllocatorConfig &cfg,
             timeline::TimelineRecorder *timeline)
        : m_work(work), m_alloc(cfg), m_timeline(timeline), m_categories(categorize(work))
    {
    }

    Result<ReplayResult> run()
    {
        for (size_t i = 0; i < m_work.events.size() && !m_result.oom; ++i) {
            auto step = apply(i, m_work.events[i]);
            if (!step.ok())
                return Result<ReplayResult>::fail(step.error());
            observe(i);
        }
        finish();
        return Result<ReplayResult>::ok(std::move(m_result));
    }

  private:
    Result<void> apply(size_t i, const TraceEvent &ev)
    {
        switch (ev.kind) {
        case EventKind::alloc:
            return do_alloc(i, ev);
        case EventKind::free:
            return do_free(ev);
        case EventKind::record_stream: {
            auto it = m_live.find(ev.id);
            if (it == m_live.end())
                return Result<void>::success(); // a host storage
            return m_alloc.record_stream(it->second.ptr, ev.stream);
        }
        case EventKind::empty_cache:
            m_alloc.empty_cache();
            break;
        case EventKind::set_fraction:
            return m_alloc.set_memory_fraction(ev.fraction);
        case EventKind::iteration:
            start_iteration(i, ev.iteration);
            break;
        case EventKind::phase:
            if (m_timeline && ev.phase != m_phase)
                m_timeline->mark(i, timeline::MarkerKind::phase, trace::phase_name(ev.phase));
            m_phase = ev.phase;
            break;
        }
        return Result<void>::success();
    }

    Result<void> do_alloc(size_t i, const TraceEvent &ev)
    {
        if (ev.dev != Device::gpu)
            return Result<void>::success();
        sim::MallocResult r = m_alloc.malloc(ev.bytes, ev.stream);
        ++m_result.mallocs;
        if (!r.ok) {
            m_result.oom = true;
            m_result.oom_message = r.oom_message;
            return Result<void>::success();
        }
        Category c = m_categories[i];
        m_live[ev.id] = {r.ptr, ev.bytes, c};
        uint64_t &live = m_live_bytes[static_cast<size_t>(c)];
        live += ev.bytes;
        uint64_t &peak = m_result.category_peak[static_cast<size_t>(c)];
        peak = std::max(peak, live);
        return Result<void>::success();
    }

    Result<void> do_free(const TraceEvent &ev)
    {
        auto it = m_live.find(ev.id);
        if (it == m_live.end())
            return Result<void>::success(); // host storage, or dropped by an earlier pass
        m_live_bytes[static_cast<size_t>(it->second.category)] -= it->second.bytes;
        uint64_t ptr = it->second.ptr;
        m_live.erase(it);
        return m_alloc.free(ptr);
    }

    void start_iteration(size_t i, uint32_t n)
    {
        close_iteration();
        m_current = {n, 0, 0};
        if (m_timeline)
            m_timeline->mark(i, timeline::MarkerKind::iteration, "iteration " + std::to_string(n));
    }

    void close_iteration()
    {
        m_result.iterations.push_back(m_current);
        if (m_current.iteration <= 1)
            m_result.first_reserved_peak =
                std::max(m_result.first_reserved_peak, m_current.reserved);
        else {
            m_result.has_steady = true;
            m_result.steady_reserved_peak =
                std::max(m_result.steady_reserved_peak, m_current.reserved);
        }
    }

    void observe(size_t i)
    {
        const sim::DeviceStats &s = m_alloc.stats();
        auto all = static_cast<size_t>(sim::StatType::aggregate);
        uint64_t allocated = static_cast<uint64_t>(s.allocated_bytes[all].current);
        uint64_t reserved = static_cast<uint64_t>(s.reserved_bytes[all].current);
        m_current.allocated = std::max(m_current.allocated, allocated);
        m_current.reserved = std::max(m_current.reserved, reserved);
        if (allocated > m_result.allocated_peak) {
            m_result.allocated_peak = allocated;
            m_result.live_at_peak = m_live_bytes;
        }
        m_result.reserved_peak = std::max(m_result.reserved_peak, reserved);
        if (m_timeline)
            m_timeline->sample(i, allocated, reserved);
    }

    void finish() { close_iteration(); }

    const Workload &m_work;
    sim::DeviceCachingAllocator m_alloc;
    timeline::TimelineRecorder *m_timeline;
    std::vector<Category> m_categories;
    std::unordered_map<uint64_t, LiveBlock> m_live; // storage id -> block
    CategoryBytes m_live_bytes{};
    IterationPeak m_current{};
    Phase m_phase = Phase::setup;
    ReplayResult m_result;
};

} // namespace

Result<ReplayResult> replay(const Workload &work, const sim::AllocatorConfig &cfg,
                            timeline::TimelineRecorder *timeline)
{
    Replayer r(work, cfg, timeline);
    return r.run();
}

} // namespace xmem::analysis
