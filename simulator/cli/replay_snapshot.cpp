// Snapshot → allocator calls. alloc and free_requested drive the simulator (real block
// addresses are mapped to simulated ones); segment_* entries are what the GPU did and go to
// SegmentCheck, which also feeds their addresses back so best-fit ties break the same way.
// A real segment_free of a segment the simulator still holds can only come from
// torch.cuda.empty_cache() (no trace action of its own), so the replay calls it there.
#include "cli/replay.h"

#include "cli/segment_check.h"
#include "trace/flat_map.h"
#include "trace/snapshot_reader.h"

#include <cinttypes>
#include <cstdio>

namespace xmem::cli
{

namespace
{

using xmem::trace::SnapshotAction;
using xmem::trace::SnapshotEvent;

std::string hex(uint64_t value)
{
    char text[24];
    std::snprintf(text, sizeof text, "0x%" PRIx64, value);
    return text;
}

class SnapshotReplay : public xmem::trace::SnapshotVisitor
{
  public:
    SnapshotReplay(const std::string &name, const SnapshotReplayOptions &options,
                   xmem::sim::DeviceCachingAllocator &allocator,
                   xmem::timeline::TimelineRecorder *timeline)
        : m_name(name), m_options(options), m_allocator(allocator), m_timeline(timeline)
    {
        m_report.format = "snapshot";
        m_allocator.set_observer(&m_check);
        m_allocator.set_address_source(&m_check);
    }
    ~SnapshotReplay() override
    {
        m_allocator.set_observer(nullptr);
        m_allocator.set_address_source(nullptr);
    }

    std::optional<Error> on_event(const SnapshotEvent &ev) override;
    ReplayReport finish();
    bool stopped_by_oom() const { return m_report.oom.has_value(); }

  private:
    std::optional<Error> entry_error(const SnapshotEvent &ev, const std::string &what) const
    {
        return Error{"xmem: " + m_name + ": device_traces[" + std::to_string(ev.device) + "][" +
                     std::to_string(ev.index) + "]: " + what};
    }
    std::optional<Error> on_alloc(const SnapshotEvent &ev);
    std::optional<Error> on_free(const SnapshotEvent &ev);
    void on_segment(const SnapshotEvent &ev);

    std::string m_name;
    SnapshotReplayOptions m_options;
    xmem::sim::DeviceCachingAllocator &m_allocator;
    xmem::timeline::TimelineRecorder *m_timeline;
    SegmentCheck m_check;
    xmem::trace::FlatMap<uint64_t> m_sim_of_real; // live block: real address → simulated
    int64_t m_real_reserved = 0;
    ReplayReport m_report;
};

std::optional<Error> SnapshotReplay::on_alloc(const SnapshotEvent &ev)
{
    ++m_report.gpu_calls;
    xmem::sim::MallocResult r = m_allocator.malloc(ev.size, ev.stream);
    if (!r.ok) {
        m_report.oom = OomReport{ev.size, r.alloc_size, r.oom_message, ev.index, 0};
        return Error{""}; // stop reading; not an error (stopped_by_oom)
    }
    if (!m_sim_of_real.insert(ev.addr, r.ptr))
        return entry_error(ev, "alloc at " + hex(ev.addr) +
                                   ", which is already allocated (entries out of order?)");
    return std::nullopt;
}

std::optional<Error> SnapshotReplay::on_free(const SnapshotEvent &ev)
{
    uint64_t ptr = 0;
    if (!m_sim_of_real.erase(ev.addr, &ptr)) {
        ++m_report.unknown_frees; // allocated before _record_memory_history started
        return std::nullopt;
    }
    ++m_report.gpu_calls;
    auto freed = m_allocator.free(ptr);
    if (!freed.ok())
        return entry_error(ev, "the simulator refused the free: " + freed.error().message);
    return std::nullopt;
}

void SnapshotReplay::on_segment(const SnapshotEvent &ev)
{
    bool grows =
        ev.action == SnapshotAction::segment_alloc || ev.action == SnapshotAction::segment_map;
    m_real_reserved += grows ? static_cast<int64_t>(ev.size) : -static_cast<int64_t>(ev.size);
    if (m_real_reserved > static_cast<int64_t>(m_report.real_reserved_peak))
        m_report.real_reserved_peak = static_cast<uint64_t>(m_real_reserved);
    m_check.on_real(SegmentRecord{xmem::trace::snapshot_action_name(ev.action), ev.addr, ev.size,
                                  ev.stream, ev.index});
    if (ev.action == SnapshotAction::segment_free && m_check.holds_segment(ev.addr)) {
        ++m_report.gpu_calls;
        m_allocator.empty_cache();
    }
}

std::optional<Error> SnapshotReplay::on_event(const SnapshotEvent &ev)
{
    if (ev.device != m_options.device)
        return std::nullopt;
    ++m_report.events;
    m_check.set_event(ev.index);
    std::optional<Error> problem;
    switch (ev.action) {
    case SnapshotAction::alloc:
        problem = on_alloc(ev);
        break;
    case SnapshotAction::free_requested:
        problem = on_free(ev);
        break;
    case SnapshotAction::segment_alloc:
    case SnapshotAction::segment_free:
    case SnapshotAction::segment_map:
    case SnapshotAction::segment_unmap:
        on_segment(ev);
        break;
    case SnapshotAction::oom:
        ++m_report.real_ooms;
        break;
    case SnapshotAction::free_completed: // the simulator completes frees itself
    case SnapshotAction::snapshot:
        break;
    }
    if (m_options.verify)
        m_check.compare(false);
    if (m_timeline) {
        const xmem::sim::DeviceStats &stats = m_allocator.stats();
        m_timeline->sample(ev.index, static_cast<uint64_t>(stats.allocated_bytes[0].current),
                           static_cast<uint64_t>(stats.reserved_bytes[0].current));
    }
    return problem;
}

ReplayReport SnapshotReplay::finish()
{
    if (m_options.verify) {
        if (!m_report.oom)
            m_check.compare(true);
        m_report.verify = m_check.report();
    }
    return m_report;
}

} // namespace

Result<ReplayReport> replay_snapshot(std::FILE *file, const std::string &name,
                                     const SnapshotReplayOptions &options,
                                     xmem::sim::DeviceCachingAllocator &allocator,
                                     xmem::timeline::TimelineRecorder *timeline)
{
    SnapshotReplay replay(name, options, allocator, timeline);
    auto summary = xmem::trace::read_snapshot(file, name, replay);
    if (!summary.ok() && !replay.stopped_by_oom())
        return Result<ReplayReport>::fail(summary.error());
    if (summary.ok() && options.device >= summary.value().devices)
        return Result<ReplayReport>::fail(
            "xmem: " + name + ": --device " + std::to_string(options.device) +
            " but the snapshot has " + std::to_string(summary.value().devices) +
            " device trace(s)");
    return Result<ReplayReport>::ok(replay.finish());
}

} // namespace xmem::cli
