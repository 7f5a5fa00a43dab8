// Expandable segments (2.1+, allocator.md 7): one reserved address range per new
// segment, physical pages mapped on demand and unmapped by empty_cache. Mirrors
// try_allocate_expandable_block, find_expandable_block, map_block, unmap_block and
// release_expandable_segment as of 2.6.
#include <algorithm>

#include "allocator/allocator.h"
#include "allocator/constants.h"
#include "allocator/stat_update.h"

namespace xmem::sim
{

namespace
{

// PyTorch reserves 1 1/8 of the device's memory per range; an unlimited device model
// reserves 1 TiB, more than any request the simulator will see.
constexpr uint64_t kUnlimitedDeviceVa = uint64_t{1} << 40;

uint64_t floor_to(uint64_t v, uint64_t unit)
{
    return v / unit * unit;
}
uint64_t ceil_to(uint64_t v, uint64_t unit)
{
    return (v + unit - 1) / unit * unit;
}

bool allocatable(const Block *b)
{
    return b != nullptr && !b->allocated && b->event_count == 0 && b->stream_uses.empty();
}

// Splices `b` between before and after in the segment's list (Block::splice).
void splice(Block *b, Block *before, Block *after)
{
    if (before != nullptr)
        before->next = b;
    b->prev = before;
    if (after != nullptr)
        after->prev = b;
    b->next = after;
}

} // namespace

// try_allocate_expandable_block (2.2+ shape): map just enough pages in front of / into the
// chosen unmapped range, merging them with free neighbours, and hand the result back.
Block *DeviceCachingAllocator::try_allocate_expandable_block(StreamId stream, BlockPool &pool,
                                                             size_t size)
{
    Block *candidate = find_expandable_block(stream, pool, size);
    // Candidate shapes: unmapped -> *, or free -> unmapped -> *.
    if (!candidate->mapped && !map_block(candidate, std::min<size_t>(candidate->size, size)))
        return nullptr;
    while (candidate->size < size) {
        // Invariant: free -> unmapped -> *; map_block merges the new pages into candidate.
        const size_t remaining = size - candidate->size;
        Block *new_candidate = candidate->next;
        if (!map_block(new_candidate, std::min<size_t>(remaining, new_candidate->size)))
            return nullptr;
        candidate = new_candidate;
    }
    pool.erase_from_blocks(candidate);
    return candidate;
}

// find_expandable_block: the lowest unmapped range of this stream (with the free block in
// front of it, if any) that has room for size bytes; else a new address range.
Block *DeviceCachingAllocator::find_expandable_block(StreamId stream, BlockPool &pool, size_t size)
{
    auto has_available_address_space = [size](const Block *b) {
        size_t bytes = 0;
        while (bytes < size && allocatable(b)) {
            bytes += b->size;
            b = b->next;
        }
        return bytes >= size;
    };
    for (auto it = pool.unmapped.lower_bound(FreeKey{stream, 0, 0, nullptr});
         it != pool.unmapped.end() && it->stream == stream; ++it) {
        Block *c = it->block;
        if (allocatable(c->prev))
            c = c->prev;
        if (has_available_address_space(c))
            return c;
    }
    const uint64_t page = pool.is_small ? kSmallBuffer : m_cfg.large_segment_size;
    const uint64_t device =
        m_cfg.device_total_bytes == 0 ? kUnlimitedDeviceVa : m_cfg.device_total_bytes;
    const uint64_t va_size = ceil_to(device + device / 8, page);
    const uint64_t base = next_segment_address(va_size, stream);
    m_expandable_segments.push_back(
        std::make_unique<ExpandableSegment>(ExpandableSegment{base, va_size, page, stream}));
    Block *candidate = new_block(stream, va_size, &pool, base);
    candidate->mapped = false;
    candidate->expandable_segment = m_expandable_segments.back().get();
    pool.unmapped.insert(key_of(candidate));
    return candidate;
}

// map_block: map the pages covering [to_map->ptr, +size); all or nothing, as cuMemCreate
// failing part-way unmaps what it mapped. reserved grows; the segment count does not
// (allocator.md 7.3).
bool DeviceCachingAllocator::map_block(Block *to_map, size_t size)
{
    ExpandableSegment *es = to_map->expandable_segment;
    const uint64_t begin = floor_to(to_map->ptr - es->base, es->page_size);
    const uint64_t end = ceil_to(to_map->ptr + size - es->base, es->page_size);
    const uint64_t mapped_ptr = es->base + begin;
    const uint64_t mapped_size = end - begin;
    if (!device_can_allocate(mapped_size))
        return false;

    BlockPool &pool = *to_map->pool;
    pool.unmapped.erase(key_of(to_map));
    to_map->mapped = true;
    if (mapped_size < to_map->size) {
        // to_map -> remaining (still unmapped) -> to_map->next
        Block *remaining =
            new_block(to_map->stream, to_map->size - mapped_size, &pool, to_map->ptr + mapped_size);
        remaining->mapped = false;
        remaining->expandable_segment = es;
        splice(remaining, to_map, to_map->next);
        pool.unmapped.insert(key_of(remaining));
        to_map->size = mapped_size;
    }
    try_merge_blocks(to_map, to_map->prev, pool);
    try_merge_blocks(to_map, to_map->next, pool);
    pool.insert_into_blocks(to_map);

    m_total_allocated_memory += mapped_size;
    increase(m_stats.reserved_bytes, pool.stat_type(), mapped_size);
    ++m_stats.num_device_alloc;
    trace(TraceAction::segment_map, mapped_ptr, mapped_size, to_map->stream);
    return true;
}

// unmap_block: unmap the whole pages strictly inside a free block; its partial-page ends
// stay mapped as free blocks of their own (allocator.md 7.4).
void DeviceCachingAllocator::unmap_block(Block *block)
{
    ExpandableSegment *es = block->expandable_segment;
    const uint64_t start = block->ptr - es->base;
    const uint64_t begin = ceil_to(start, es->page_size);
    const uint64_t end = floor_to(start + block->size, es->page_size);
    if (begin >= end)
        return;
    const uint64_t unmapped_size = end - begin;

    BlockPool &pool = *block->pool;
    pool.erase_from_blocks(block);
    const uint64_t before_size = begin - start;
    if (before_size > 0) {
        // prev? -> before_free -> block
        Block *before_free = new_block(block->stream, before_size, &pool, block->ptr);
        before_free->expandable_segment = es;
        splice(before_free, block->prev, block);
        pool.insert_into_blocks(before_free);
    }
    const uint64_t after_size = block->size - (before_size + unmapped_size);
    if (after_size > 0) {
        // block -> after_free -> next?
        Block *after_free = new_block(block->stream, after_size, &pool, es->base + end);
        after_free->expandable_segment = es;
        splice(after_free, block, block->next);
        pool.insert_into_blocks(after_free);
    }
    block->ptr = es->base + begin;
    block->size = unmapped_size;
    block->mapped = false;
    try_merge_blocks(block, block->prev, pool);
    try_merge_blocks(block, block->next, pool);
    pool.unmapped.insert(key_of(block));

    m_total_allocated_memory -= unmapped_size;
    decrease(m_stats.reserved_bytes, pool.stat_type(), unmapped_size);
    ++m_stats.num_device_free;
    trace(TraceAction::segment_unmap, es->base + begin, unmapped_size, block->stream);
}

// release_expandable_segment: a range that is entirely unmapped again is given back.
void DeviceCachingAllocator::release_expandable_segment(Block *block)
{
    ExpandableSegment *es = block->expandable_segment;
    block->pool->unmapped.erase(key_of(block));
    auto it =
        std::find_if(m_expandable_segments.begin(), m_expandable_segments.end(),
                     [es](const std::unique_ptr<ExpandableSegment> &s) { return s.get() == es; });
    if (it != m_expandable_segments.end())
        m_expandable_segments.erase(it);
    delete_block(block);
}

} // namespace xmem::sim
