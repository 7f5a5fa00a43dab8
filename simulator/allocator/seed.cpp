// seed_segment: a partial trace's starting state, built directly. A prelude of mallocs cannot
// in general produce an arbitrary tiling (the segment size follows from the first request),
// so the blocks are laid down as alloc_found_block and free_block would have left them, with
// the same stat updates (allocator.md 4.14, 4.15).
#include "allocator/allocator.h"
#include "allocator/constants.h"
#include "allocator/stat_update.h"

#include <cstdio>

namespace xmem::sim
{

namespace
{

std::string hex_address(uint64_t v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

Result<void> DeviceCachingAllocator::seed_segment(const SeedSegment &seg)
{
    auto refuse = [&](const std::string &why) {
        return Result<void>::fail("xmem: cannot recreate the segment at " + hex_address(seg.addr) +
                                  ": " + why);
    };
    if (m_cfg.expandable_segments)
        return refuse("expandable segments are not recreated");
    if (seg.blocks.empty())
        return refuse("it has no blocks");
    uint64_t total = 0;
    for (const SeedBlock &b : seg.blocks) {
        if (b.size == 0 || b.size % kMinBlockSize != 0)
            return refuse("a block of " + std::to_string(b.size) + " B is not a multiple of 512 B");
        if (m_active_blocks.find(seg.addr + total) != nullptr)
            return refuse("it overlaps an allocated block");
        total += b.size;
    }
    BlockPool &pool = seg.small ? m_small_blocks : m_large_blocks;
    const StatType t = pool.stat_type();
    const bool split = seg.blocks.size() > 1;
    Block *prev = nullptr;
    uint64_t ptr = seg.addr;
    for (const SeedBlock &b : seg.blocks) {
        Block *block = new_block(seg.stream, b.size, &pool, ptr);
        block->prev = prev;
        if (prev != nullptr)
            prev->next = block;
        prev = block;
        ptr += b.size;
        if (!b.allocated) {
            pool.insert_into_blocks(block);
            if (split) {
                increase(m_stats.inactive_split, t, 1);
                increase(m_stats.inactive_split_bytes, t, b.size);
            }
            continue;
        }
        block->allocated = true;
        block->requested_size = b.requested_size;
        m_active_blocks.insert(block->ptr, block);
        increase(m_stats.allocation, t, 1);
        increase(m_stats.allocated_bytes, t, b.size);
        increase(m_stats.active, t, 1);
        increase(m_stats.active_bytes, t, b.size);
        increase(m_stats.requested_bytes, t, b.requested_size);
        if (b.size >= m_cfg.max_split_size)
            m_stats.oversize_allocations.increase(1);
    }
    m_total_allocated_memory += total;
    increase(m_stats.segment, t, 1);
    increase(m_stats.reserved_bytes, t, total);
    if (total >= m_cfg.max_split_size)
        m_stats.oversize_segments.increase(1);
    ++m_stats.num_device_alloc;
    return Result<void>::success();
}

} // namespace xmem::sim
