// check_invariants: an O(blocks) audit of the whole allocator state, for tests and
// property checks. Everything it asserts follows from allocator-spec §3 and §10.
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "allocator/allocator.h"

namespace xmem::sim {

namespace {

struct Census {
    uint64_t reserved[kNumStatTypes] = {};
    uint64_t allocated[kNumStatTypes] = {};
    uint64_t active_bytes[kNumStatTypes] = {};
    int64_t segments[kNumStatTypes] = {};
    int64_t inactive_split[kNumStatTypes] = {};
    uint64_t inactive_split_bytes[kNumStatTypes] = {};
};

Result<void> broken(const std::string& what) { return Result<void>::fail("xmem: allocator invariant broken: " + what); }

void count(uint64_t (&a)[kNumStatTypes], StatType t, uint64_t v) {
    a[0] += v;
    a[static_cast<size_t>(t)] += v;
}
void count(int64_t (&a)[kNumStatTypes], StatType t, int64_t v) {
    a[0] += v;
    a[static_cast<size_t>(t)] += v;
}

}  // namespace

Result<void> DeviceCachingAllocator::check_invariants() const {
    // Every block the allocator knows of, and the heads of their segments.
    std::vector<const Block*> known;
    for (const BlockPool* pool : {&m_large_blocks, &m_small_blocks}) {
        for (const FreeKey& k : pool->blocks) {
            if (k.block->allocated || !k.block->mapped || k.block->event_count != 0) return broken("a pool holds a block that is not free");
            if (k.ptr != k.block->ptr || k.size != k.block->size) return broken("a free-set key disagrees with its block");
            known.push_back(k.block);
        }
        for (const FreeKey& k : pool->unmapped) known.push_back(k.block);
    }
    m_active_blocks.for_each([&](uint64_t, const Block* b) { known.push_back(b); });
    std::unordered_set<const Block*> heads;
    for (const Block* b : known) {
        while (b->prev != nullptr) b = b->prev;
        heads.insert(b);
    }
    std::unordered_set<const Block*> in_sets(known.begin(), known.end());

    Census c;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const Block* head : heads) {
        const StatType t = head->pool->stat_type();
        const bool expandable = head->expandable_segment != nullptr;
        const bool split = head->next != nullptr;
        uint64_t end = head->ptr;
        for (const Block* b = head; b != nullptr; b = b->next) {
            if (b->ptr != end) return broken("blocks of a segment do not tile it");
            if (b->next != nullptr && b->next->prev != b) return broken("segment list links disagree");
            end = b->ptr + b->size;
            if (!in_sets.count(b) && !(b->event_count > 0 && !b->allocated)) return broken("a block is in no set and not pending");
            if (b->mapped) count(c.reserved, t, b->size);
            if (b->allocated) count(c.allocated, t, b->size);
            if (b->allocated || b->event_count > 0) count(c.active_bytes, t, b->size);
            if (!expandable && split && !b->allocated && b->event_count == 0) {
                count(c.inactive_split, t, 1);
                count(c.inactive_split_bytes, t, b->size);
            }
        }
        if (expandable && (head->ptr != head->expandable_segment->base ||
                           end != head->expandable_segment->base + head->expandable_segment->size))
            return broken("an expandable segment's blocks do not cover its range");
        if (!expandable) count(c.segments, t, 1);
        ranges.emplace_back(head->ptr, end);
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i)
        if (ranges[i].first < ranges[i - 1].second) return broken("two segments overlap");

    for (size_t t = 0; t < kNumStatTypes; ++t) {
        if (static_cast<uint64_t>(m_stats.reserved_bytes[t].current) != c.reserved[t]) return broken("reserved_bytes != mapped segment bytes");
        if (static_cast<uint64_t>(m_stats.allocated_bytes[t].current) != c.allocated[t]) return broken("allocated_bytes != allocated block bytes");
        if (static_cast<uint64_t>(m_stats.active_bytes[t].current) != c.active_bytes[t]) return broken("active_bytes != allocated + pending block bytes");
        if (m_stats.segment[t].current != c.segments[t]) return broken("segment != number of cudaMalloc'd segments");
        if (m_stats.inactive_split[t].current != c.inactive_split[t]) return broken("inactive_split != free blocks of split segments");
        if (static_cast<uint64_t>(m_stats.inactive_split_bytes[t].current) != c.inactive_split_bytes[t]) return broken("inactive_split_bytes disagrees with the blocks");
        if (m_stats.allocated_bytes[t].current > m_stats.reserved_bytes[t].current) return broken("allocated > reserved");
    }
    if (m_total_allocated_memory != c.reserved[0]) return broken("total_allocated_memory != reserved bytes");
    return Result<void>::success();
}

}  // namespace xmem::sim
