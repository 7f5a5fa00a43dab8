#include "cli/segment_check.h"

#include <algorithm>

namespace xmem::cli
{

using xmem::sim::TraceAction;

void SegmentCheck::on_real(const SegmentRecord &real)
{
    if (real.action == "segment_alloc")
        m_real_addresses.push_back(real);
    if (real.action == "segment_map")
        m_real_map_base = real.addr;
    if (!m_report.diverged)
        m_expected.push_back(real);
}

void SegmentCheck::on_trace(const xmem::sim::TraceEntry &entry)
{
    bool is_segment =
        entry.action == TraceAction::segment_alloc || entry.action == TraceAction::segment_free ||
        entry.action == TraceAction::segment_map || entry.action == TraceAction::segment_unmap;
    if (!is_segment)
        return;
    if (entry.action == TraceAction::segment_alloc)
        m_sim_segments[entry.addr] = entry.size;
    if (entry.action == TraceAction::segment_free)
        m_sim_segments.erase(entry.addr);
    if (entry.action == TraceAction::segment_map)
        map_range(entry.addr, entry.size);
    if (entry.action == TraceAction::segment_unmap)
        unmap_range(entry.addr, entry.size);
    if (!m_report.diverged)
        m_got.push_back(SegmentRecord{xmem::sim::to_string(entry.action), entry.addr, entry.size,
                                      entry.stream, m_event});
}

bool SegmentCheck::overlaps_live(uint64_t addr, uint64_t size) const
{
    auto after = m_sim_segments.lower_bound(addr);
    if (after != m_sim_segments.end() && after->first < addr + size)
        return true;
    if (after == m_sim_segments.begin())
        return false;
    auto before = std::prev(after);
    return before->first + before->second > addr;
}

// Mapped ranges are kept merged, so a lookup is one map search.
void SegmentCheck::map_range(uint64_t addr, uint64_t size)
{
    uint64_t begin = addr, end = addr + size;
    auto it = m_sim_mapped.lower_bound(addr);
    if (it != m_sim_mapped.begin() && std::prev(it)->second >= begin)
        it = std::prev(it);
    while (it != m_sim_mapped.end() && it->first <= end) {
        begin = std::min(begin, it->first);
        end = std::max(end, it->second);
        it = m_sim_mapped.erase(it);
    }
    m_sim_mapped[begin] = end;
}

void SegmentCheck::unmap_range(uint64_t addr, uint64_t size)
{
    uint64_t end = addr + size;
    auto it = m_sim_mapped.upper_bound(addr);
    if (it != m_sim_mapped.begin())
        it = std::prev(it);
    while (it != m_sim_mapped.end() && it->first < end) {
        uint64_t range_begin = it->first, range_end = it->second;
        it = m_sim_mapped.erase(it);
        if (range_begin < addr)
            m_sim_mapped[range_begin] = std::min(range_end, addr);
        if (range_end > end)
            m_sim_mapped[end] = range_end;
    }
}

bool SegmentCheck::holds_mapped(uint64_t addr) const
{
    auto it = m_sim_mapped.upper_bound(addr);
    return it != m_sim_mapped.begin() && std::prev(it)->second > addr;
}

uint64_t SegmentCheck::synthetic_address(uint64_t size)
{
    uint64_t addr = m_next_synthetic;
    m_next_synthetic += (size + (2ULL << 20) - 1) / (2ULL << 20) * (2ULL << 20);
    return addr;
}

uint64_t SegmentCheck::next_segment_address(uint64_t size, xmem::sim::StreamId)
{
    if (m_expandable) {
        std::optional<uint64_t> base = m_real_map_base;
        m_real_map_base.reset();
        if (base && *base != 0 && !holds_mapped(*base))
            return *base;
        return synthetic_address(size);
    }
    if (!m_real_addresses.empty()) {
        SegmentRecord real = m_real_addresses.front();
        m_real_addresses.pop_front();
        if (real.addr != 0 && real.size == size && !overlaps_live(real.addr, size))
            return real.addr;
    }
    return synthetic_address(size);
}

bool SegmentCheck::same(const SegmentRecord &real, const SegmentRecord &sim)
{
    if (real.action != sim.action || real.size != sim.size)
        return false;
    return sim.addr >= k_synthetic_base || real.addr == sim.addr;
}

void SegmentCheck::diverge(const std::string &kind, const SegmentRecord &expected,
                           const std::optional<SegmentRecord> &got)
{
    m_report.ran = true;
    if (m_report.diverged)
        return;
    m_report.diverged = true;
    m_report.kind = kind;
    m_report.divergence_event = expected.event;
    m_report.expected = expected;
    m_report.got = got;
    m_expected.clear();
    m_got.clear();
}

void SegmentCheck::compare(bool at_end)
{
    m_report.ran = true;
    while (!m_report.diverged && !m_expected.empty() && !m_got.empty()) {
        if (!same(m_expected.front(), m_got.front())) {
            m_report.diverged = true;
            m_report.kind = "segment";
            m_report.divergence_event = m_expected.front().event;
            m_report.expected = m_expected.front();
            m_report.got = m_got.front();
            break;
        }
        ++m_report.compared;
        m_expected.pop_front();
        m_got.pop_front();
    }
    // Leftovers: the real side may legitimately run ahead by one segment_alloc (logged
    // before its alloc) while the trace is read, so only the end of the trace decides.
    bool leftover = !m_expected.empty() || !m_got.empty();
    if (!m_report.diverged && at_end && leftover) {
        m_report.diverged = true;
        m_report.kind = "segment";
        if (!m_expected.empty()) {
            m_report.expected = m_expected.front();
            m_report.divergence_event = m_expected.front().event;
        } else {
            m_report.got = m_got.front();
            m_report.divergence_event = m_got.front().event;
        }
    }
    if (m_report.diverged) {
        m_expected.clear();
        m_got.clear();
    }
}

} // namespace xmem::cli
