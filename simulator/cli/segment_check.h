// SegmentCheck: feeds the simulator the GPU's own segment addresses and compares the
// simulated segment sequence with the real one (xmem sim --verify on a snapshot).
//
// The real trace logs segment_alloc just before the alloc that caused it, so when the
// simulator asks for a new segment address the matching real entry has already been read.
// A real address is handed out only if it does not overlap a segment the simulator still
// holds (after a divergence it might); otherwise a synthetic address above 2^60 is used and
// addresses are not compared for that segment.
//
// With expandable segments the GPU logs no reservation, only segment_map of pages, and the
// first map of a new reservation starts at its base. The simulator reserves while serving the
// alloc that follows that map, so the latest real segment_map not yet used as a base is the
// recorded reservation base.
#pragma once

#include "allocator/trace.h"
#include "cli/replay.h"

#include <deque>
#include <map>
#include <optional>

namespace xmem::cli
{

class SegmentCheck : public xmem::sim::TraceObserver, public xmem::sim::SegmentAddressSource
{
  public:
    static constexpr uint64_t k_synthetic_base = 1ULL << 60;

    // A real segment_* entry of the snapshot, in order.
    void on_real(const SegmentRecord &real);
    // Simulator side (TraceObserver); non-segment actions are ignored.
    void on_trace(const xmem::sim::TraceEntry &entry) override;
    uint64_t next_segment_address(uint64_t size, xmem::sim::StreamId stream) override;

    // A segment the simulator was seeded with (a partial trace's state at entry 0).
    void seed_segment(uint64_t addr, uint64_t size) { m_sim_segments[addr] = size; }
    // The allocator maps expandable segments (its reservations ask for bases).
    void set_expandable(bool expandable) { m_expandable = expandable; }
    // Entry index the simulator is working on (for records of its side).
    void set_event(uint64_t event) { m_event = event; }
    // Pairs up what both sides did so far; at_end: the trace is over, leftovers diverge.
    void compare(bool at_end);
    // True while the simulator holds a segment starting at addr.
    bool holds_segment(uint64_t addr) const { return m_sim_segments.count(addr) != 0; }
    // True while the simulator has the page at addr of an expandable segment mapped.
    bool holds_mapped(uint64_t addr) const;
    // A check outside the segment sequence failed (kind: block, oom, peak; replay.h). Only
    // the first divergence of any kind is kept.
    void diverge(const std::string &kind, const SegmentRecord &expected,
                 const std::optional<SegmentRecord> &got);
    bool diverged() const { return m_report.diverged; }
    VerifyReport &report() { return m_report; }

  private:
    bool overlaps_live(uint64_t addr, uint64_t size) const;
    uint64_t synthetic_address(uint64_t size);
    void map_range(uint64_t addr, uint64_t size);
    void unmap_range(uint64_t addr, uint64_t size);
    static bool same(const SegmentRecord &a, const SegmentRecord &b);

    std::deque<SegmentRecord> m_expected;        // real, not yet compared
    std::deque<SegmentRecord> m_got;             // simulated, not yet compared
    std::deque<SegmentRecord> m_real_addresses;  // real segment_allocs not yet handed out
    std::map<uint64_t, uint64_t> m_sim_segments; // live simulated segments: addr → size
    std::map<uint64_t, uint64_t> m_sim_mapped;   // mapped expandable ranges: addr → end
    std::optional<uint64_t> m_real_map_base;     // latest real segment_map, not yet a base
    bool m_expandable = false;
    uint64_t m_next_synthetic = k_synthetic_base;
    uint64_t m_event = 0;
    VerifyReport m_report;
};

} // namespace xmem::cli
