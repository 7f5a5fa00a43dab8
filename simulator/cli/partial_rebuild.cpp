#include "cli/partial_rebuild.h"

#include "trace/flat_map.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>

namespace xmem::cli
{

namespace
{

using xmem::trace::SnapshotAction;
using xmem::trace::SnapshotEvent;
using xmem::trace::SnapshotSegment;

constexpr uint64_t k_small_segment = 2ULL << 20; // kSmallBuffer (allocator.md 4.4)
constexpr uint64_t k_large_split = 1ULL << 20;   // kSmallSize: large blocks split above it
constexpr uint64_t k_granule = 512;              // kMinBlockSize: sizes are multiples of it

std::string hex(uint64_t value)
{
    char text[24];
    std::snprintf(text, sizeof text, "0x%" PRIx64, value);
    return text;
}

struct StartSegment {
    uint64_t size = 0;
    uint64_t stream = 0;
    bool small = false;
};

struct StartBlock {
    uint64_t requested = 0;
    uint64_t size = 0; // 0: not known from the final state
};

// Frees of blocks never allocated in the trace: without final segments, the only sign.
bool frees_unrecorded_blocks(const std::vector<SnapshotEvent> &events)
{
    xmem::trace::FlatMap<bool> live; // a hash set: this runs on every complete trace too
    for (const SnapshotEvent &ev : events) {
        if (ev.action == SnapshotAction::alloc)
            live.insert(ev.addr, true);
        if (ev.action == SnapshotAction::free_requested && !live.erase(ev.addr))
            return true;
    }
    return false;
}

// A large-pool block of unknown size (MIN: its rounded request) followed by a free range of
// GAP > 1 MiB: its unsplit tail may be up to 1 MiB (oversize: the rounding tolerance), as long
// as the free block after it stays over 1 MiB (allocator.md 4.5, 4.13).
void bound_tail(uint64_t addr, uint64_t min, uint64_t gap,
                const xmem::sim::DeviceCachingAllocator &allocator, RebuildPlan &plan)
{
    const xmem::sim::AllocatorConfig &cfg = allocator.config();
    if (cfg.expandable_segments)
        return; // every block is split there (allocator.md 4.13): no tail
    uint64_t most =
        min >= cfg.max_split_size ? cfg.max_non_split_rounding - k_granule : k_large_split;
    uint64_t room = gap > k_large_split + k_granule ? gap - k_large_split - k_granule : 0;
    uint64_t tail = std::min(most, room);
    if (tail)
        plan.undetermined.push_back({addr, min, min + tail});
}

// Lays the live blocks of one segment down in address order, with the gaps free.
std::string tile(uint64_t addr, const StartSegment &seg,
                 const std::map<uint64_t, StartBlock> &blocks,
                 const xmem::sim::DeviceCachingAllocator &allocator, RebuildPlan &plan)
{
    xmem::sim::SeedSegment out{addr, seg.stream, seg.small, {}};
    const uint64_t end = addr + seg.size;
    uint64_t pos = addr;
    uint64_t unknown_at = 0; // address of the block just laid down if its size was not given
    auto add_gap = [&](uint64_t gap) -> std::string {
        if (gap == 0)
            return "";
        bool tail = !seg.small && gap <= k_large_split;
        if (tail && !out.blocks.empty() && out.blocks.back().allocated) {
            out.blocks.back().size += gap;
            ++plan.inferred_sizes;
            return "";
        }
        if (unknown_at && !seg.small)
            bound_tail(unknown_at, out.blocks.back().size, gap, allocator, plan);
        if (tail)
            return "a free range of " + std::to_string(gap) + " B at " + hex(pos) +
                   " is too small for a large-pool block";
        out.blocks.push_back({gap, 0, false});
        return "";
    };
    for (auto it = blocks.lower_bound(addr); it != blocks.end() && it->first < end; ++it) {
        if (it->first < pos)
            return "the block at " + hex(it->first) + " overlaps the one before it";
        if (std::string problem = add_gap(it->first - pos); !problem.empty())
            return problem;
        uint64_t size =
            it->second.size ? it->second.size : allocator.rounded_size(it->second.requested);
        unknown_at = it->second.size ? 0 : it->first;
        out.blocks.push_back({size, it->second.requested, true});
        plan.requested += it->second.requested;
        plan.live.emplace_back(it->first, it->second.requested);
        pos = it->first + size;
    }
    if (pos > end)
        return "the block ending at " + hex(pos) + " runs past its segment's end " + hex(end);
    if (std::string problem = add_gap(end - pos); !problem.empty())
        return problem;
    plan.reserved += seg.size;
    plan.segments.push_back(std::move(out));
    return "";
}

// Gives the block at ADDR of the rebuilt state SIZE bytes, taken from the free block after it.
void resize_block(RebuildPlan &plan, uint64_t addr, uint64_t size)
{
    for (xmem::sim::SeedSegment &seg : plan.segments) {
        uint64_t pos = seg.addr;
        for (size_t i = 0; i + 1 < seg.blocks.size(); pos += seg.blocks[i++].size) {
            if (pos == addr) {
                uint64_t grow = size - seg.blocks[i].size;
                seg.blocks[i].size = size;
                seg.blocks[i + 1].size -= grow; // the free block: over 1 MiB (bound_tail)
                return;
            }
        }
    }
}

// A bounded block ends where the first allocation that lands within its bounds, while it is
// still live, begins: that allocation splits the free block after it from the front, and
// nothing else can be allocated there (allocator.md 4.14).
void settle_by_later_allocs(const std::vector<SnapshotEvent> &events, RebuildPlan &plan)
{
    std::map<uint64_t, size_t> open; // block address → index in plan.undetermined
    for (size_t i = 0; i < plan.undetermined.size(); ++i)
        open[plan.undetermined[i].addr] = i;
    std::vector<bool> settled(plan.undetermined.size(), false);
    for (const SnapshotEvent &ev : events) {
        if (open.empty())
            break;
        if (ev.action == SnapshotAction::free_requested)
            open.erase(ev.addr);
        if (ev.action != SnapshotAction::alloc)
            continue;
        auto it = open.upper_bound(ev.addr);
        if (it == open.begin())
            continue;
        --it;
        const SizeBound &b = plan.undetermined[it->second];
        if (ev.addr < b.addr + b.min || ev.addr > b.addr + b.max)
            continue;
        resize_block(plan, b.addr, ev.addr - b.addr);
        settled[it->second] = true;
        ++plan.inferred_sizes;
        open.erase(it);
    }
    std::vector<SizeBound> left;
    for (size_t i = 0; i < plan.undetermined.size(); ++i)
        if (!settled[i])
            left.push_back(plan.undetermined[i]);
    plan.undetermined = std::move(left);
}

} // namespace

RebuildPlan plan_rebuild(const std::vector<SnapshotEvent> &events,
                         const std::vector<SnapshotSegment> &final,
                         const xmem::sim::DeviceCachingAllocator &allocator)
{
    RebuildPlan plan;
    if (final.empty()) {
        if (frees_unrecorded_blocks(events)) {
            plan.needed = true;
            plan.why_not = "the snapshot frees blocks allocated before recording began but has "
                           "no 'segments' (the final state) to rebuild them from";
        }
        return plan;
    }
    std::map<uint64_t, StartSegment> segments;
    std::map<uint64_t, StartBlock> live;
    bool expandable = false;
    for (const SnapshotSegment &s : final) {
        expandable = expandable || s.expandable;
        segments[s.addr] = StartSegment{s.size, s.stream, s.small};
        for (const auto &b : s.blocks)
            if (b.allocated)
                live[b.addr] = StartBlock{b.requested_size, b.size};
    }
    for (auto ev = events.rbegin(); ev != events.rend(); ++ev) {
        switch (ev->action) {
        case SnapshotAction::alloc:
            live.erase(ev->addr);
            break;
        case SnapshotAction::free_requested:
            live[ev->addr] = StartBlock{ev->size, 0};
            break;
        case SnapshotAction::segment_alloc:
            segments.erase(ev->addr);
            break;
        case SnapshotAction::segment_free:
            segments[ev->addr] = StartSegment{ev->size, ev->stream, ev->size == k_small_segment};
            break;
        default:
            break;
        }
    }
    plan.needed = !segments.empty() || !live.empty();
    if (!plan.needed)
        return plan;
    if (expandable) {
        plan.why_not = "it uses expandable segments: the snapshot gives neither the base nor "
                       "the size of their address reservations, which decide where pages are "
                       "mapped next, and the simulator cannot seed mapped pages yet";
        return plan;
    }
    for (const auto &[addr, seg] : segments) {
        std::string problem = tile(addr, seg, live, allocator, plan);
        if (!problem.empty()) {
            plan.why_not = problem;
            return plan;
        }
    }
    if (plan.live.size() != live.size())
        plan.why_not = std::to_string(live.size() - plan.live.size()) +
                       " block(s) live at entry 0 lie in no segment of the final state";
    settle_by_later_allocs(events, plan);
    return plan;
}

namespace
{

// ", 2 undetermined, replayed at their minimum: 0x..: 3145728..4194304 B, ... and 3 more".
std::string describe_bounds(const std::vector<SizeBound> &bounds)
{
    if (bounds.empty())
        return "";
    constexpr size_t k_listed = 3;
    std::string out =
        ", " + std::to_string(bounds.size()) + " undetermined, replayed at their minimum:";
    for (size_t i = 0; i < bounds.size() && i < k_listed; ++i)
        out += std::string(i ? "," : "") + " " + hex(bounds[i].addr) + ": " +
               std::to_string(bounds[i].min) + ".." + std::to_string(bounds[i].max) + " B";
    if (bounds.size() > k_listed)
        out += " and " + std::to_string(bounds.size() - k_listed) + " more";
    return out;
}

} // namespace

std::string describe_rebuild(const RebuildPlan &plan)
{
    if (!plan.why_not.empty())
        return "cannot rebuild the state at entry 0: " + plan.why_not;
    return "rebuilt the state at entry 0 from the final segments: " +
           std::to_string(plan.segments.size()) + " segments (" + std::to_string(plan.reserved) +
           " B), " + std::to_string(plan.live.size()) + " live blocks (" +
           std::to_string(plan.requested) + " B requested), " +
           std::to_string(plan.inferred_sizes) +
           " block sizes inferred (split rule, later allocations)" +
           describe_bounds(plan.undetermined);
}

} // namespace xmem::cli
