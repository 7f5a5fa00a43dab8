#include "analysis/replay.h"

#include "allocator/allocator.h"
#include "analysis/timeline_stack.h"
#include "replay/replay_loop.h"

#include <algorithm>
#include <memory>

namespace xmem::analysis
{

namespace
{

// The estimate's events are the workload in memory, in order.
class WorkloadSource : public replay::EventSource
{
  public:
    explicit WorkloadSource(const Workload &work) : m_events(work.events) {}
    Result<bool> next(TraceEvent &event) override
    {
        if (m_next == m_events.size())
            return Result<bool>::ok(false);
        event = m_events[m_next++];
        return Result<bool>::ok(true);
    }

  private:
    const std::vector<TraceEvent> &m_events;
    size_t m_next = 0;
};

// What the estimate measures on top of the shared replay loop: live bytes by category and
// by module and op (each block's tag is its alloc event's index, which names all three), and
// per-iteration and overall peaks; and, for a timeline, its stacked layers.
class PeakObserver : public replay::ReplayObserver
{
  public:
    explicit PeakObserver(const Workload &work)
        : m_categories(categorize(work)), m_attribution(work, m_categories)
    {
    }

    void stack_into(timeline::TimelineRecorder &timeline, const ReplayResult &first)
    {
        m_stack = std::make_unique<TimelineStack>(
            timeline, m_attribution, first.attribution.modules, first.allocated_peak_event);
    }

    uint32_t on_alloc(uint64_t index, const TraceEvent &ev) override
    {
        size_t c = static_cast<size_t>(m_categories[index]);
        m_live_bytes[c] += ev.bytes;
        m_result.category_peak[c] = std::max(m_result.category_peak[c], m_live_bytes[c]);
        m_attribution.on_alloc(index, ev.bytes);
        if (m_stack)
            m_stack->on_alloc(index, ev.bytes);
        return static_cast<uint32_t>(index); // a workload in memory has far fewer events
    }

    void on_free(uint64_t, uint64_t bytes, uint32_t tag) override
    {
        m_live_bytes[static_cast<size_t>(m_categories[tag])] -= bytes;
        m_attribution.on_free(tag, bytes);
        if (m_stack)
            m_stack->on_free(tag);
    }

    void on_iteration(uint64_t, uint32_t n) override
    {
        close_iteration();
        m_current = {n, 0, 0};
    }

    void after_event(uint64_t index, uint64_t allocated, uint64_t reserved) override
    {
        m_current.allocated = std::max(m_current.allocated, allocated);
        m_current.reserved = std::max(m_current.reserved, reserved);
        if (allocated > m_result.allocated_peak) {
            m_result.allocated_peak = allocated;
            m_result.allocated_peak_event = index;
            m_result.live_at_peak = m_live_bytes;
            m_attribution.remember_peak();
        }
        m_result.reserved_peak = std::max(m_result.reserved_peak, reserved);
        if (m_stack)
            m_stack->after_event(index, m_live_bytes);
    }

    ReplayResult finish(const replay::ReplayCounts &counts)
    {
        close_iteration();
        m_result.attribution = m_attribution.at_peak(k_attribution_top);
        m_result.mallocs = counts.mallocs;
        m_result.oom = counts.oom.has_value();
        if (counts.oom)
            m_result.oom_message = counts.oom->message;
        return std::move(m_result);
    }

  private:
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

    std::vector<Category> m_categories;
    AttributionTracker m_attribution;
    CategoryBytes m_live_bytes{};
    IterationPeak m_current{};
    ReplayResult m_result;
    std::unique_ptr<TimelineStack> m_stack;
};

Result<ReplayResult> run(const Workload &work, const sim::AllocatorConfig &cfg,
                         timeline::TimelineRecorder *timeline, const ReplayResult *first)
{
    sim::DeviceCachingAllocator allocator(cfg);
    WorkloadSource source(work);
    PeakObserver peaks(work);
    if (timeline && first)
        peaks.stack_into(*timeline, *first);
    replay::ReplayOptions options;
    options.mark_repeated_phases = false;
    auto counts = replay::replay_events(source, allocator, options, timeline, &peaks);
    if (!counts.ok())
        return Result<ReplayResult>::fail(counts.error());
    return Result<ReplayResult>::ok(peaks.finish(counts.value()));
}

} // namespace

Result<ReplayResult> replay(const Workload &work, const sim::AllocatorConfig &cfg,
                            timeline::TimelineRecorder *timeline)
{
    return run(work, cfg, timeline, nullptr);
}

Result<void> replay_timeline(const Workload &work, const sim::AllocatorConfig &cfg,
                             const ReplayResult &first, timeline::TimelineRecorder &timeline)
{
    auto again = run(work, cfg, &timeline, &first);
    if (!again.ok())
        return Result<void>::fail(again.error());
    return Result<void>::success();
}

} // namespace xmem::analysis
