// check_invariants: an O(blocks) audit of the whole allocator state, for tests and
// property checks. Everything it asserts follows from allocator.md 3 and 10.
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "allocator/allocator.h"

namespace xmem::sim
{

namespace
{

// What the blocks say the stats should be, per StatType.
struct Census {
    uint64_t reserved[kNumStatTypes] = {};
    uint64_t allocated[kNumStatTypes] = {};
    uint64_t active_bytes[kNumStatTypes] = {};
    int64_t segments[kNumStatTypes] = {};
    int64_t inactive_split[kNumStatTypes] = {};
    uint64_t inactive_split_bytes[kNumStatTypes] = {};
    size_t blocks_walked = 0;
};

Result<void> broken(const std::string &what)
{
    return Result<void>::fail("xmem: allocator invariant broken: " + what);
}

template <class V> void count(V (&a)[kNumStatTypes], StatType t, V v)
{
    a[0] += v;
    a[static_cast<size_t>(t)] += v;
}

bool is_pending(const Block *b)
{
    return !b->allocated && b->event_count > 0;
}

// Free-set members must be free and keyed by their current address and size.
Result<void> audit_pool(const BlockPool &pool, std::vector<const Block *> &known)
{
    for (const FreeKey &k : pool.blocks) {
        const Block *b = k.block;
        if (b->allocated || !b->mapped || b->event_count != 0)
            return broken("a pool holds a block that is not free");
        if (k.ptr != b->ptr || k.size != b->size || k.stream != b->stream)
            return broken("a free-set key disagrees with its block");
        known.push_back(b);
    }
    for (const FreeKey &k : pool.unmapped) {
        if (k.block->mapped || k.block->allocated)
            return broken("the unmapped set holds a mapped or allocated block");
        if (k.ptr != k.block->ptr)
            return broken("an unmapped-set key disagrees with its block");
        known.push_back(k.block);
    }
    return Result<void>::success();
}

// Walks one segment from its head: blocks tile it and every block is accounted for.
Result<void> audit_segment(const Block *head, const std::unordered_set<const Block *> &known,
                           Census &c, std::vector<std::pair<uint64_t, uint64_t>> &ranges)
{
    const StatType t = head->pool->stat_type();
    const ExpandableSegment *es = head->expandable_segment;
    const bool split = head->next != nullptr;
    uint64_t end = head->ptr;
    for (const Block *b = head; b != nullptr; b = b->next) {
        if (b->ptr != end)
            return broken("blocks of a segment do not tile it");
        if (b->next != nullptr && b->next->prev != b)
            return broken("segment list links disagree");
        if (b->expandable_segment != es)
            return broken("blocks of one segment disagree on its kind");
        end = b->ptr + b->size;
        ++c.blocks_walked;
        if (!known.count(b))
            return broken("a block is in no set and not pending");
        if (b->mapped)
            count(c.reserved, t, b->size);
        if (b->allocated)
            count(c.allocated, t, b->size);
        if (b->allocated || is_pending(b))
            count(c.active_bytes, t, b->size);
        if (es == nullptr && split && !b->allocated && !is_pending(b)) {
            count(c.inactive_split, t, int64_t{1});
            count(c.inactive_split_bytes, t, b->size);
        }
    }
    if (es != nullptr && (head->ptr != es->base || end != es->base + es->size))
        return broken("an expandable segment's blocks do not cover its range");
    if (es == nullptr)
        count(c.segments, t, int64_t{1});
    ranges.emplace_back(head->ptr, end);
    return Result<void>::success();
}

Result<void> compare(const DeviceStats &s, const Census &c, uint64_t total_allocated_memory)
{
    for (size_t t = 0; t < kNumStatTypes; ++t) {
        if (static_cast<uint64_t>(s.reserved_bytes[t].current) != c.reserved[t])
            return broken("reserved_bytes != mapped segment bytes");
        if (static_cast<uint64_t>(s.allocated_bytes[t].current) != c.allocated[t])
            return broken("allocated_bytes != allocated block bytes");
        if (static_cast<uint64_t>(s.active_bytes[t].current) != c.active_bytes[t])
            return broken("active_bytes != allocated + pending block bytes");
        if (s.segment[t].current != c.segments[t])
            return broken("segment != number of cudaMalloc'd segments");
        if (s.inactive_split[t].current != c.inactive_split[t])
            return broken("inactive_split != free blocks of split segments");
        if (static_cast<uint64_t>(s.inactive_split_bytes[t].current) != c.inactive_split_bytes[t])
            return broken("inactive_split_bytes disagrees with the blocks");
        if (s.allocated_bytes[t].current > s.reserved_bytes[t].current)
            return broken("allocated > reserved");
    }
    if (total_allocated_memory != c.reserved[0])
        return broken("total_allocated_memory != reserved bytes");
    return Result<void>::success();
}

} // namespace

Result<void> DeviceCachingAllocator::check_invariants() const
{
    // Every block the allocator knows of: free, unmapped, allocated or pending (the last two
    // stay in the address map until free_block).
    std::vector<const Block *> known;
    for (const BlockPool *pool : {&m_large_blocks, &m_small_blocks})
        if (auto r = audit_pool(*pool, known); !r)
            return r;
    m_active_blocks.for_each([&](uint64_t ptr, const Block *b) {
        if (ptr == b->ptr)
            known.push_back(b);
    });
    const std::unordered_set<const Block *> known_set(known.begin(), known.end());
    if (known_set.size() != known.size())
        return broken("a block is in two sets, or keyed by a stale address");

    Census c;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const Block *b : known) {
        if (b->prev != nullptr)
            continue; // only heads start a walk
        if (auto r = audit_segment(b, known_set, c, ranges); !r)
            return r;
    }
    if (c.blocks_walked != known.size())
        return broken("a block belongs to no segment reachable from a head");
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i)
        if (ranges[i].first < ranges[i - 1].second)
            return broken("two segments overlap");
    return compare(m_stats, c, m_total_allocated_memory);
}

} // namespace xmem::sim
