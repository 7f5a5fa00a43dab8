// Returning memory to CUDA: new segments (alloc_block), garbage collection, release of
// oversize blocks and the full cache flush (allocator.md 4.7–4.11).
#include <vector>

#include "allocator/allocator.h"
#include "allocator/constants.h"
#include "allocator/stat_update.h"

namespace xmem::sim
{

// alloc_block (1.13 → newest, allocator.md 4.8): the fraction limit first, then expandable mapping
// (2.1+) or a cudaMalloc that succeeds iff the device model has room.
bool DeviceCachingAllocator::alloc_block(AllocParams &p, bool is_retry)
{
    if (is_retry)
        ++m_stats.num_alloc_retries;
    const size_t size = p.alloc_size;
    if (m_set_fraction && m_total_allocated_memory + size > m_allowed_memory_maximum)
        return false;
    if (m_cfg.expandable_segments) {
        p.block = try_allocate_expandable_block(p.stream, *p.pool, p.size);
        return p.block != nullptr;
    }
    if (!device_can_allocate(size))
        return false;
    const uint64_t ptr = next_segment_address(size, p.stream);
    m_total_allocated_memory += size;
    p.block = new_block(p.stream, size, p.pool, ptr);
    increase(m_stats.segment, p.stat_type(), 1);
    increase(m_stats.reserved_bytes, p.stat_type(), size);
    if (size >= m_cfg.max_split_size)
        m_stats.oversize_segments.increase(1);
    ++m_stats.num_device_alloc;
    trace(TraceAction::segment_alloc, ptr, size, p.stream);
    return true;
}

// garbage_collect_cached_blocks (1.13 → newest, allocator.md 4.7): free whole, non-expandable large
// segments whose age is at least the average, sweep after sweep, until enough is reclaimed.
void DeviceCachingAllocator::garbage_collect_cached_blocks()
{
    const auto gc_threshold = static_cast<uint64_t>(m_cfg.garbage_collection_threshold *
                                                    static_cast<double>(m_allowed_memory_maximum));
    if (m_total_allocated_memory <= gc_threshold)
        return;
    const uint64_t target_size = m_total_allocated_memory - gc_threshold;
    uint64_t gc_reclaimed = 0;
    BlockPool &pool = m_large_blocks;
    auto freeable = [](const Block *b) {
        return !b->is_split() && b->expandable_segment == nullptr;
    };

    double total_age = 0.0;
    int64_t freeable_block_count = 0;
    for (const FreeKey &k : pool.blocks) {
        if (!freeable(k.block))
            continue;
        total_age += static_cast<double>(pool.gc_age(k.block));
        ++freeable_block_count;
    }
    if (freeable_block_count == 0)
        return;

    bool block_freed = true;
    while (gc_reclaimed < target_size && block_freed && freeable_block_count > 0) {
        const double age_threshold = total_age / static_cast<double>(freeable_block_count);
        block_freed = false;
        // Not stopped at target_size: GC should not trigger again right away.
        for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
            Block *block = it->block;
            ++it;
            const auto age = static_cast<double>(pool.gc_age(block));
            if (freeable(block) && age >= age_threshold) {
                block_freed = true;
                gc_reclaimed += block->size;
                total_age -= age;
                --freeable_block_count;
                release_block(block);
            }
        }
    }
}

// release_available_cached_blocks (1.13 → newest, allocator.md 4.10): only with max_split_size set.
// Frees one large-enough oversize block, else the largest ones below the key until enough
// is freed; blocks freed before a "false" stay freed. Expandable blocks are skipped (2.5+;
// earlier 2.x would cudaFree a mapped range, which the simulator does not imitate).
bool DeviceCachingAllocator::release_available_cached_blocks(const AllocParams &p)
{
    const size_t max_split = m_cfg.max_split_size;
    if (max_split == kUnlimited)
        return false;
    BlockPool &pool = *p.pool;
    const size_t key_size = p.size < max_split ? max_split : p.size;
    auto it = pool.blocks.lower_bound(FreeKey{p.stream, key_size, 0, nullptr});
    if (it != pool.blocks.end() && it->stream == p.stream &&
        it->block->expandable_segment == nullptr) {
        release_block(it->block);
        return true;
    }
    // No single block is large enough: free oversize blocks, starting with the largest.
    if (it == pool.blocks.begin())
        return false;
    size_t total_released = 0;
    --it; // the largest block below the key
    while (total_released < key_size && it->size >= max_split && it->stream == p.stream) {
        Block *current = it->block;
        const bool is_first = it == pool.blocks.begin();
        if (!is_first)
            --it;
        if (current->expandable_segment == nullptr) {
            total_released += current->size;
            release_block(current);
        }
        if (is_first)
            break;
    }
    return total_released >= key_size;
}

// release_cached_blocks (1.13 → newest, allocator.md 4.11) = empty_cache: complete every pending
// free, then cudaFree every whole free segment (and unmap free expandable pages) of both pools.
bool DeviceCachingAllocator::release_cached_blocks()
{
    synchronize_and_free_events();
    release_blocks(m_large_blocks);
    release_blocks(m_small_blocks);
    return true;
}

// synchronize_and_free_events (1.13 → newest; num_sync_all_streams is 2.x).
void DeviceCachingAllocator::synchronize_and_free_events()
{
    ++m_stats.num_sync_all_streams;
    while (!m_pending_frees.empty()) {
        Block *block = m_pending_frees.front().block;
        m_pending_frees.pop_front();
        block->event_count = 0;
        free_block(block);
    }
}

// release_blocks (1.13 → newest; expandable part 2.1+).
void DeviceCachingAllocator::release_blocks(BlockPool &pool)
{
    std::vector<Block *> to_unmap; // unmapping mutates the set: gather first
    for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
        Block *block = it->block;
        ++it;
        if (block->expandable_segment != nullptr) {
            to_unmap.push_back(block);
        } else if (!block->is_split()) {
            release_block(block);
        }
    }
    for (Block *block : to_unmap) {
        unmap_block(block);
        if (!block->mapped && !block->is_split())
            release_expandable_segment(block);
    }
}

// release_block (1.13 → newest): cudaFree of one whole segment.
void DeviceCachingAllocator::release_block(Block *block)
{
    m_total_allocated_memory -= block->size;
    const StatType pool_type = block->pool->stat_type();
    decrease(m_stats.segment, pool_type, 1);
    decrease(m_stats.reserved_bytes, pool_type, block->size);
    if (block->size >= m_cfg.max_split_size)
        m_stats.oversize_segments.decrease(1);
    ++m_stats.num_device_free;
    trace(TraceAction::segment_free, block->ptr, block->size, block->stream);
    block->pool->erase_from_blocks(block);
    delete_block(block);
}

} // namespace xmem::sim
