// Compact trace -> allocator calls, through the shared replay loop (replay/replay_loop.h):
// every P record becomes a timeline marker, and an allocator refusal names its trace line.
#include "cli/replay.h"

#include "replay/replay_loop.h"

namespace xmem::cli
{

namespace
{

class ReaderSource : public replay::EventSource
{
  public:
    explicit ReaderSource(xmem::trace::CompactTraceReader &reader) : m_reader(reader) {}
    Result<bool> next(xmem::trace::TraceEvent &event) override { return m_reader.next(event); }

  private:
    xmem::trace::CompactTraceReader &m_reader;
};

} // namespace

Result<ReplayReport> replay_compact(xmem::trace::CompactTraceReader &reader,
                                    xmem::sim::DeviceCachingAllocator &allocator,
                                    xmem::timeline::TimelineRecorder *timeline)
{
    ReaderSource source(reader);
    replay::ReplayOptions options;
    options.mark_repeated_phases = true;
    options.trace_name = reader.name();
    auto counts = replay::replay_events(source, allocator, options, timeline, nullptr);
    if (!counts.ok())
        return Result<ReplayReport>::fail(counts.error());
    ReplayReport report;
    report.format = "compact";
    report.events = counts.value().events;
    report.gpu_calls = counts.value().gpu_calls;
    report.oom = std::move(counts.value().oom);
    return Result<ReplayReport>::ok(std::move(report));
}

} // namespace xmem::cli
