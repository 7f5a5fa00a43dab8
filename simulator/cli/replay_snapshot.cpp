// Snapshot → allocator calls. alloc and free_requested drive the simulator (real block
// addresses are mapped to simulated ones); segment_* entries are what the GPU did and go to
// SegmentCheck, which also feeds their addresses back so best-fit ties break the same way.
// A real segment_free of a segment the simulator still holds can only come from
// torch.cuda.empty_cache() (no trace action of its own), so the replay calls it there; so
// can a segment_unmap of expandable pages the simulator still maps.
// With --verify every alloc's simulated block address is compared with the recorded one, a
// recorded oom is replayed as a request that must fail at the capacity the GPU had then, and
// the peaks are compared at the end (VerifyReport in replay.h).
#include "cli/replay.h"

#include "cli/partial_rebuild.h"
#include "cli/segment_check.h"
#include "trace/flat_map.h"
#include "trace/snapshot_reader.h"

#include <algorithm>
#include <cinttypes>
#include <initializer_list>
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

// Reads one device's entries and final segments; the replay needs the whole trace before
// its first entry when the state there has to be rebuilt.
class SnapshotCollector : public xmem::trace::SnapshotVisitor
{
  public:
    explicit SnapshotCollector(uint32_t device) : m_device(device) {}
    std::optional<Error> on_event(const SnapshotEvent &ev) override
    {
        if (ev.device == m_device)
            events.push_back(ev);
        return std::nullopt;
    }
    void on_segment(const xmem::trace::SnapshotSegment &segment) override
    {
        if (segment.device == m_device)
            segments.push_back(segment);
    }
    std::vector<SnapshotEvent> events;
    std::vector<xmem::trace::SnapshotSegment> segments;

  private:
    uint32_t m_device;
};

class SnapshotReplay
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
        m_check.set_expandable(m_allocator.config().expandable_segments);
    }
    ~SnapshotReplay()
    {
        m_allocator.set_observer(nullptr);
        m_allocator.set_address_source(nullptr);
    }

    std::optional<Error> on_event(const SnapshotEvent &ev);
    // A partial trace: the allocator starts from the rebuilt state (partial_rebuild.h).
    std::optional<Error> start_from(const RebuildPlan &plan);
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
    void on_oom(const SnapshotEvent &ev);
    void check_block(const SnapshotEvent &ev, uint64_t simulated);
    void check_peaks();
    void compare_segments(bool at_end);
    void note_pool_state(std::initializer_list<uint64_t> addresses);

    std::string m_name;
    SnapshotReplayOptions m_options;
    xmem::sim::DeviceCachingAllocator &m_allocator;
    xmem::timeline::TimelineRecorder *m_timeline;
    SegmentCheck m_check;
    xmem::trace::FlatMap<uint64_t> m_sim_of_real; // live block: real address → simulated
    int64_t m_real_reserved = 0;
    int64_t m_real_requested = 0;
    std::optional<uint64_t> m_last_block; // simulated address of this entry's alloc
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
    m_real_requested += static_cast<int64_t>(ev.size);
    if (m_real_requested > static_cast<int64_t>(m_report.real_requested_peak))
        m_report.real_requested_peak = static_cast<uint64_t>(m_real_requested);
    m_last_block = r.ptr;
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
    m_real_requested -= static_cast<int64_t>(ev.size);
    auto freed = m_allocator.free(ptr);
    if (!freed.ok())
        return entry_error(ev, "the simulator refused the free: " + freed.error().message);
    return std::nullopt;
}

std::optional<Error> SnapshotReplay::start_from(const RebuildPlan &plan)
{
    m_report.partial = plan.needed;
    if (!plan.needed)
        return std::nullopt;
    m_report.rebuild = describe_rebuild(plan);
    m_report.undetermined_sizes = plan.undetermined;
    if (!plan.why_not.empty())
        return std::nullopt;
    for (const xmem::sim::SeedSegment &seg : plan.segments) {
        if (auto seeded = m_allocator.seed_segment(seg); !seeded.ok())
            return Error{"xmem: " + m_name + ": " + seeded.error().message};
        uint64_t size = 0;
        for (const auto &b : seg.blocks)
            size += b.size;
        m_check.seed_segment(seg.addr, size);
    }
    for (const auto &[addr, requested] : plan.live)
        m_sim_of_real.insert(addr, addr);
    m_real_reserved = static_cast<int64_t>(plan.reserved);
    m_real_requested = static_cast<int64_t>(plan.requested);
    m_report.real_reserved_peak = plan.reserved;
    m_report.real_requested_peak = plan.requested;
    m_report.reserved_at_start = plan.reserved;
    return std::nullopt;
}

void SnapshotReplay::check_block(const SnapshotEvent &ev, uint64_t simulated)
{
    if (m_check.diverged())
        return;
    if (simulated == ev.addr) {
        ++m_check.report().blocks_matched;
        return;
    }
    m_check.diverge("block", SegmentRecord{"alloc", ev.addr, ev.size, ev.stream, ev.index},
                    SegmentRecord{"alloc", simulated, ev.size, ev.stream, ev.index});
    note_pool_state({ev.addr, simulated});
}

// The GPU refused this request: replay it at the capacity the GPU had then (what the process
// held plus the free bytes it reported), expecting the simulator to refuse it too.
void SnapshotReplay::on_oom(const SnapshotEvent &ev)
{
    ++m_report.real_ooms;
    ++m_report.gpu_calls;
    const uint64_t configured = m_allocator.config().device_total_bytes;
    m_allocator.set_device_total_bytes(m_allocator.config().device_used_outside_bytes +
                                       m_allocator.total_allocated_memory() + ev.device_free);
    xmem::sim::MallocResult r = m_allocator.malloc(ev.size, ev.stream);
    m_allocator.set_device_total_bytes(configured);
    if (!r.ok) {
        ++m_check.report().ooms_matched;
        return;
    }
    (void)m_allocator.free(r.ptr); // the GPU's request failed: keep the state the GPU's
    if (m_options.verify && !m_check.diverged()) {
        m_check.diverge("oom", SegmentRecord{"oom", 0, ev.size, ev.stream, ev.index},
                        SegmentRecord{"alloc", r.ptr, ev.size, ev.stream, ev.index});
        note_pool_state({r.ptr});
    }
}

void SnapshotReplay::compare_segments(bool at_end)
{
    bool before = m_check.diverged();
    m_check.compare(at_end);
    if (before || !m_check.diverged())
        return;
    const VerifyReport &v = m_check.report();
    uint64_t expected = v.expected ? v.expected->addr : v.got->addr;
    note_pool_state({expected, v.got ? v.got->addr : expected});
}

void SnapshotReplay::check_peaks()
{
    if (m_check.diverged() || m_report.oom)
        return;
    struct Peak {
        const char *name;
        const char *stat;
        uint64_t real;
    };
    const Peak peaks[] = {
        {"reserved_peak", "reserved_bytes.all.peak", m_report.real_reserved_peak},
        {"requested_peak", "requested_bytes.all.peak", m_report.real_requested_peak}};
    for (const Peak &p : peaks) {
        int64_t simulated = 0;
        if (!m_allocator.stats().get(p.stat, &simulated))
            continue; // requested_bytes is 2.0+
        if (static_cast<uint64_t>(simulated) == p.real) {
            ++m_check.report().peaks_matched;
            continue;
        }
        uint64_t end = m_report.events ? m_report.events - 1 : 0;
        m_check.diverge("peak", SegmentRecord{p.name, 0, p.real, 0, end},
                        SegmentRecord{p.name, 0, static_cast<uint64_t>(simulated), 0, end});
        return;
    }
}

// The simulated segments holding (or nearest to) the addresses, one line each, blocks in
// address order; long segments show the blocks nearest the addresses only.
void SnapshotReplay::note_pool_state(std::initializer_list<uint64_t> addresses)
{
    constexpr size_t k_blocks_shown = 8;
    std::vector<xmem::sim::SegmentView> segments = m_allocator.segments();
    std::vector<size_t> chosen;
    for (uint64_t addr : addresses) {
        size_t best = segments.size();
        uint64_t best_distance = UINT64_MAX;
        for (size_t i = 0; i < segments.size(); ++i) {
            const auto &s = segments[i];
            uint64_t distance = addr < s.addr             ? s.addr - addr
                                : addr >= s.addr + s.size ? addr - (s.addr + s.size) + 1
                                                          : 0;
            if (distance < best_distance) {
                best_distance = distance;
                best = i;
            }
        }
        if (best < segments.size() && std::find(chosen.begin(), chosen.end(), best) == chosen.end())
            chosen.push_back(best);
    }
    std::vector<std::string> &out = m_check.report().pool_state;
    for (size_t i : chosen) {
        const auto &s = segments[i];
        std::string line = "segment " + hex(s.addr) + " " + std::to_string(s.size) + " B " +
                           (s.small ? "small" : "large") + (s.expandable ? " expandable" : "") +
                           " stream " + std::to_string(s.stream) + ":";
        size_t first = 0;
        if (s.blocks.size() > k_blocks_shown) {
            uint64_t focus = *addresses.begin();
            while (first + k_blocks_shown < s.blocks.size() &&
                   s.blocks[first + k_blocks_shown / 2].ptr < focus)
                ++first;
            if (first)
                line += " ...";
        }
        for (size_t b = first; b < s.blocks.size() && b < first + k_blocks_shown; ++b) {
            const auto &blk = s.blocks[b];
            line += " [" + hex(blk.ptr) + " " + std::to_string(blk.size) + " " +
                    (blk.allocated ? "allocated"
                     : blk.mapped  ? "free"
                                   : "unmapped") +
                    "]";
        }
        if (first + k_blocks_shown < s.blocks.size())
            line += " ...";
        out.push_back(line);
    }
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
    bool sim_still_holds =
        (ev.action == SnapshotAction::segment_free && m_check.holds_segment(ev.addr)) ||
        (ev.action == SnapshotAction::segment_unmap && m_check.holds_mapped(ev.addr));
    if (sim_still_holds) {
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
        on_oom(ev);
        break;
    case SnapshotAction::free_completed: // the simulator completes frees itself
    case SnapshotAction::snapshot:
    case SnapshotAction::annotate: // text on a live allocation
        break;
    }
    // Segment events first: a segment that differs explains the block address that follows.
    if (m_options.verify)
        compare_segments(false);
    if (m_options.verify && m_last_block)
        check_block(ev, *m_last_block);
    m_last_block.reset();
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
            compare_segments(true);
        check_peaks();
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
    SnapshotCollector collected(options.device);
    auto summary = xmem::trace::read_snapshot(file, name, collected);
    if (!summary.ok())
        return Result<ReplayReport>::fail(summary.error());
    if (options.device >= summary.value().devices)
        return Result<ReplayReport>::fail(
            "xmem: " + name + ": --device " + std::to_string(options.device) +
            " but the snapshot has " + std::to_string(summary.value().devices) +
            " device trace(s)");
    SnapshotReplay replay(name, options, allocator, timeline);
    RebuildPlan plan = plan_rebuild(collected.events, collected.segments, allocator);
    if (std::optional<Error> problem = replay.start_from(plan))
        return Result<ReplayReport>::fail(*problem);
    for (const SnapshotEvent &ev : collected.events) {
        std::optional<Error> stop = replay.on_event(ev);
        if (stop && replay.stopped_by_oom())
            break;
        if (stop)
            return Result<ReplayReport>::fail(*stop);
    }
    return Result<ReplayReport>::ok(replay.finish());
}

} // namespace xmem::cli
