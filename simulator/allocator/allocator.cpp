// DeviceCachingAllocator: malloc, free and the block bookkeeping between them.
// Each step is a function named after its PyTorch counterpart and says which releases it
// mirrors; allocator.h opens with the policy in prose.
#include "allocator/allocator.h"

#include <stdexcept>

#include "allocator/constants.h"
#include "allocator/oom_message.h"
#include "allocator/rounding.h"
#include "allocator/stat_update.h"

namespace xmem::sim
{

namespace
{

// Synthetic segments start where CUDA's heap typically lives and are spaced by a gap, so
// addresses are deterministic and never adjacent across segments.
constexpr uint64_t kFirstSegmentAddress = 0x7f0000000000ull;
constexpr uint64_t kSegmentGap = 2 * kMiB;
// A request above this cannot be rounded without overflow and exceeds any device.
constexpr uint64_t kMaxRequest = uint64_t{1} << 60;

std::string hex(uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

DeviceCachingAllocator::DeviceCachingAllocator(AllocatorConfig cfg)
    : m_cfg(std::move(cfg)), m_profile(profile_for(m_cfg.torch)),
      m_large_blocks(false, &m_node_arena), m_small_blocks(true, &m_node_arena),
      m_next_address(kFirstSegmentAddress)
{
    // An invariant, not an expected failure: every caller validates the config first.
    if (auto r = m_cfg.validate(); !r)
        throw std::invalid_argument(r.error().message);
    m_stats.torch = m_cfg.torch;
    m_stats.max_split_size =
        m_cfg.max_split_size == kUnlimited ? -1 : static_cast<int64_t>(m_cfg.max_split_size);
    if (m_cfg.memory_fraction)
        (void)set_memory_fraction(*m_cfg.memory_fraction);
}

DeviceCachingAllocator::~DeviceCachingAllocator() = default;

// malloc (1.13 → newest): a fallback chain of named steps (allocator.md 15.2).
MallocResult DeviceCachingAllocator::malloc(uint64_t orig_size, StreamId stream)
{
    if (orig_size == 0)
        return MallocResult{true, 0, 0, 0, 0, {}};
    ++m_malloc_count;
    process_events();
    if (orig_size > kMaxRequest) {
        AllocParams huge{stream, orig_size, &m_large_blocks, orig_size};
        return out_of_memory(huge, orig_size);
    }
    const size_t size = round_size(orig_size);
    BlockPool &pool = get_pool(size);
    AllocParams params{stream, size, &pool, get_allocation_size(size)};

    // First, try to get a block from the existing pool (free-memory callbacks, allocator.md 4.6,
    // are CUDA-IPC only and never fire in a simulation).
    bool block_found = get_free_block(params);
    if (!block_found) {
        if (gc_enabled())
            garbage_collect_cached_blocks();
        block_found = alloc_block(params, false)
                      // Free enough available cached blocks to satisfy alloc and retry.
                      || (release_available_cached_blocks(params) && alloc_block(params, false))
                      // Free all non-split cached blocks and retry.
                      || (release_cached_blocks() && alloc_block(params, true));
    }
    if (!block_found)
        return out_of_memory(params, orig_size);
    return alloc_found_block(params, orig_size);
}

// process_events (1.13 → newest, allocator.md 4.1): deferred frees whose stream uses have finished
// — modelled as "by the event_completion_delay-th malloc after the free" — go back to the pool.
void DeviceCachingAllocator::process_events()
{
    while (!m_pending_frees.empty() && m_pending_frees.front().due <= m_malloc_count) {
        Block *block = m_pending_frees.front().block;
        m_pending_frees.pop_front();
        block->event_count = 0;
        free_block(block);
    }
}

size_t DeviceCachingAllocator::round_size(size_t size) const
{
    return xmem::sim::round_size(size, m_cfg, m_profile);
}

// get_pool (1.13 → newest, allocator.md 4.3): no CUDA-graph private pools in a simulation.
BlockPool &DeviceCachingAllocator::get_pool(size_t size)
{
    return size <= kSmallSize ? m_small_blocks : m_large_blocks;
}

size_t DeviceCachingAllocator::get_allocation_size(size_t size) const
{
    return xmem::sim::get_allocation_size(size, m_cfg);
}

// get_free_block (1.13 → newest, allocator.md 4.5): best fit within the stream, then the oversize
// rules.
bool DeviceCachingAllocator::get_free_block(AllocParams &p)
{
    BlockPool &pool = *p.pool;
    if (gc_enabled())
        ++pool.get_free_blocks_call_count; // GC age clock (allocator.md 4.7)
    auto it = pool.blocks.lower_bound(FreeKey{p.stream, p.size, 0, nullptr});
    if (it == pool.blocks.end() || it->stream != p.stream)
        return false;
    if (it->block->expandable_segment != nullptr) {
        // 2.1+: judge a block at the end of a growing segment by the size it can expand to,
        // so blocks that cannot grow are preferred.
        auto expandable_size = [](const Block *b) {
            return b->size + (b->next != nullptr && !b->next->mapped ? b->next->size : 0);
        };
        auto next = std::next(it);
        while (it->block->expandable_segment != nullptr && next != pool.blocks.end() &&
               next->stream == p.stream &&
               expandable_size(next->block) < expandable_size(it->block))
            it = next++;
    }
    const size_t max_split = m_cfg.max_split_size;
    // Do not return an oversized block for a normal request.
    if (p.size < max_split && it->size >= max_split)
        return false;
    // Oversize blocks serve requests only within the rounding tolerance (1.13–2.5: 20 MiB;
    // 2.6+: max_non_split_rounding_mb).
    const size_t tolerance =
        m_profile.max_non_split_rounding_key ? m_cfg.max_non_split_rounding : kLargeBuffer;
    if (p.size >= max_split && it->size >= p.size + tolerance)
        return false;
    p.block = it->block;
    pool.blocks.erase(it);
    return true;
}

// should_split (1.13 → newest, allocator.md 4.13).
bool DeviceCachingAllocator::should_split(const Block *block, size_t size) const
{
    const size_t remaining = block->size - size;
    if (block->pool->is_small || m_cfg.expandable_segments)
        return remaining >= kMinBlockSize;
    return size < m_cfg.max_split_size && remaining > kSmallSize;
}

// alloc_found_block (2.x name; inline in 1.13's malloc, same steps): split off the tail if
// worth keeping (allocator.md 4.14), then count the allocation (allocator.md 4.15).
MallocResult DeviceCachingAllocator::alloc_found_block(AllocParams &p, uint64_t orig_size)
{
    BlockPool &pool = *p.pool;
    Block *block = p.block;
    const StatType pool_type = p.stat_type();
    const bool already_split = block->is_split();
    // 2.x leaves expandable blocks out of inactive_split (allocator.md 4.14).
    const bool track_split = block->expandable_segment == nullptr;
    if (should_split(block, p.size)) {
        Block *remaining = block;
        block = new_block(p.stream, p.size, &pool, remaining->ptr);
        block->expandable_segment = remaining->expandable_segment;
        block->prev = remaining->prev;
        if (block->prev != nullptr)
            block->prev->next = block;
        block->next = remaining;
        remaining->prev = block;
        remaining->ptr += p.size;
        remaining->size -= p.size;
        pool.insert_into_blocks(remaining);
        if (track_split && already_split) {
            // An already-split inactive block is shrunk by size bytes.
            decrease(m_stats.inactive_split_bytes, pool_type, block->size);
        } else if (track_split) {
            // A new split inactive block is created from a previously unsplit block.
            increase(m_stats.inactive_split_bytes, pool_type, remaining->size);
            increase(m_stats.inactive_split, pool_type, 1);
        }
    } else if (already_split && track_split) {
        // An already-split block becomes active.
        decrease(m_stats.inactive_split_bytes, pool_type, block->size);
        decrease(m_stats.inactive_split, pool_type, 1);
    }
    block->allocated = true;
    block->requested_size = orig_size;
    m_active_blocks.insert(block->ptr, block);
    increase(m_stats.allocation, pool_type, 1);
    increase(m_stats.allocated_bytes, pool_type, block->size);
    increase(m_stats.active, pool_type, 1);
    increase(m_stats.active_bytes, pool_type, block->size);
    increase(m_stats.requested_bytes, pool_type, orig_size);
    if (block->size >= m_cfg.max_split_size)
        m_stats.oversize_allocations.increase(1);
    trace(TraceAction::alloc, block->ptr, orig_size, p.stream);
    return MallocResult{true, block->ptr, block->size, orig_size, p.alloc_size, {}};
}

// free (1.13 → newest, allocator.md 5): allocated_bytes drops now, even if the block must wait for
// other streams before it returns to the pool.
Result<void> DeviceCachingAllocator::free(uint64_t ptr)
{
    if (ptr == 0)
        return Result<void>::success();
    Block *block = m_active_blocks.find(ptr);
    if (block == nullptr || !block->allocated)
        return Result<void>::fail("xmem: free(" + hex(ptr) +
                                  "): not a live allocation of this allocator (double free, or a "
                                  "pointer malloc never returned)");
    block->allocated = false;
    const StatType pool_type = block->pool->stat_type();
    decrease(m_stats.allocation, pool_type, 1);
    decrease(m_stats.allocated_bytes, pool_type, block->size);
    trace(TraceAction::free_requested, block->ptr, block->requested_size, block->stream);
    if (block->size >= m_cfg.max_split_size)
        m_stats.oversize_allocations.decrease(1);
    if (!block->stream_uses.empty()) {
        insert_events(block);
    } else {
        free_block(block);
    }
    return Result<void>::success();
}

// insert_events (1.13 → newest, allocator.md 5.2): one event per other stream that used the block.
void DeviceCachingAllocator::insert_events(Block *block)
{
    block->event_count += static_cast<uint32_t>(block->stream_uses.size());
    block->stream_uses.clear();
    m_pending_frees.push_back(PendingFree{block, m_malloc_count + m_cfg.event_completion_delay});
}

// recordStream (1.13 → newest, allocator.md 6.2): a use on the block's own stream changes nothing.
Result<void> DeviceCachingAllocator::record_stream(uint64_t ptr, StreamId stream)
{
    Block *block = m_active_blocks.find(ptr);
    if (block == nullptr || !block->allocated)
        return Result<void>::fail("xmem: record_stream(" + hex(ptr) +
                                  "): not a live allocation of this allocator");
    if (stream == block->stream)
        return Result<void>::success();
    for (StreamId s : block->stream_uses)
        if (s == stream)
            return Result<void>::success();
    block->stream_uses.push_back(stream);
    return Result<void>::success();
}

// free_block (1.13 → newest, allocator.md 5.3): merge with free neighbours and return to the pool.
void DeviceCachingAllocator::free_block(Block *block)
{
    trace(TraceAction::free_completed, block->ptr, block->requested_size, block->stream);
    const uint64_t original_block_size = block->size;
    const uint64_t requested_size = block->requested_size;
    BlockPool &pool = *block->pool;
    m_active_blocks.erase(block->ptr); // keyed by address: before a merge moves it
    int64_t net_change_inactive_split_blocks = 0;
    int64_t net_change_inactive_split_size = 0;
    for (Block *merge_candidate : {block->prev, block->next}) {
        const size_t subsumed_size = try_merge_blocks(block, merge_candidate, pool);
        if (subsumed_size > 0) {
            net_change_inactive_split_blocks -= 1;
            net_change_inactive_split_size -= static_cast<int64_t>(subsumed_size);
        }
    }
    pool.insert_into_blocks(block);
    if (block->is_split()) {
        net_change_inactive_split_blocks += 1;
        net_change_inactive_split_size += static_cast<int64_t>(block->size);
    }
    const StatType pool_type = pool.stat_type();
    if (block->expandable_segment == nullptr) {
        update(m_stats.inactive_split, pool_type, net_change_inactive_split_blocks);
        update(m_stats.inactive_split_bytes, pool_type, net_change_inactive_split_size);
    }
    decrease(m_stats.active, pool_type, 1);
    decrease(m_stats.active_bytes, pool_type, original_block_size);
    decrease(m_stats.requested_bytes, pool_type, requested_size);
}

// try_merge_blocks (1.13 → newest; 2.1+ also requires the same mapped state): dst absorbs a
// free neighbour src, which leaves its set and is recycled. Returns the bytes absorbed.
size_t DeviceCachingAllocator::try_merge_blocks(Block *dst, Block *src, BlockPool &pool)
{
    if (src == nullptr || src->allocated || src->event_count > 0 || !src->stream_uses.empty() ||
        dst->mapped != src->mapped)
        return 0;
    if (dst->prev == src) { // [src dst]
        dst->ptr = src->ptr;
        dst->prev = src->prev;
        if (dst->prev != nullptr)
            dst->prev->next = dst;
    } else { // [dst src]
        dst->next = src->next;
        if (dst->next != nullptr)
            dst->next->prev = dst;
    }
    const size_t subsumed_size = src->size;
    dst->size += subsumed_size;
    if (src->mapped) {
        pool.erase_from_blocks(src);
    } else {
        pool.unmapped.erase(key_of(src));
    }
    delete_block(src);
    return subsumed_size;
}

void DeviceCachingAllocator::reset_peak_stats()
{
    m_stats.reset_peak();
}

void DeviceCachingAllocator::empty_cache()
{
    release_cached_blocks();
}

// setMemoryFraction (allocator.md 8): 1.13–2.8 set a sticky flag even for 1.0; newest treats 1.0 as
// "no limit" (and so no GC). With an unlimited device model the limit is unlimited too.
Result<void> DeviceCachingAllocator::set_memory_fraction(double f)
{
    if (!(f >= 0.0 && f <= 1.0))
        return Result<void>::fail(
            "xmem: set_per_process_memory_fraction: fraction must be between 0 and 1 (got " +
            std::to_string(f) + ")");
    if (m_profile.fraction_one_is_unlimited && f >= 1.0) {
        m_set_fraction = false;
        return Result<void>::success();
    }
    m_set_fraction = true;
    m_allowed_memory_maximum =
        m_cfg.device_total_bytes == 0
            ? kUnlimited
            : static_cast<uint64_t>(f * static_cast<double>(m_cfg.device_total_bytes));
    return Result<void>::success();
}

// GC runs only with a threshold and a fraction (allocator.md 4.7).
bool DeviceCachingAllocator::gc_enabled() const
{
    return m_set_fraction && m_cfg.garbage_collection_threshold > 0.0;
}

bool DeviceCachingAllocator::device_can_allocate(uint64_t bytes) const
{
    if (m_cfg.device_total_bytes == 0)
        return true;
    const uint64_t used = m_cfg.device_used_outside_bytes + m_total_allocated_memory;
    return used <= m_cfg.device_total_bytes && bytes <= m_cfg.device_total_bytes - used;
}

uint64_t DeviceCachingAllocator::next_segment_address(uint64_t size, StreamId stream)
{
    if (m_address_source != nullptr)
        return m_address_source->next_segment_address(size, stream);
    const uint64_t address = m_next_address;
    m_next_address += (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge + kSegmentGap;
    return address;
}

Block *DeviceCachingAllocator::new_block(StreamId stream, uint64_t size, BlockPool *pool,
                                         uint64_t ptr)
{
    Block *b = m_block_arena.make();
    b->ptr = ptr;
    b->size = size;
    b->requested_size = 0;
    b->stream = stream;
    b->pool = pool;
    b->prev = nullptr;
    b->next = nullptr;
    b->expandable_segment = nullptr;
    b->gc_count_base = 0;
    b->event_count = 0;
    b->allocated = false;
    b->mapped = true;
    b->stream_uses.clear();
    return b;
}

void DeviceCachingAllocator::delete_block(Block *block)
{
    m_block_arena.recycle(block);
}

MallocResult DeviceCachingAllocator::out_of_memory(const AllocParams &p, uint64_t orig_size)
{
    const uint64_t total = m_cfg.device_total_bytes;
    const uint64_t used = m_cfg.device_used_outside_bytes + m_total_allocated_memory;
    const uint64_t device_free = total > used ? total - used : 0;
    trace(TraceAction::oom, device_free, p.size, p.stream);
    ++m_stats.num_ooms;
    OomFacts facts;
    facts.style = m_profile.oom_style;
    facts.alloc_size = p.alloc_size;
    facts.device_total = total;
    facts.device_free = device_free;
    facts.process_used = used;
    facts.allowed =
        m_set_fraction && m_allowed_memory_maximum != kUnlimited ? m_allowed_memory_maximum : 0;
    facts.has_allowed = m_set_fraction;
    facts.allocated = static_cast<uint64_t>(m_stats.allocated_bytes[0].current);
    facts.reserved = static_cast<uint64_t>(m_stats.reserved_bytes[0].current);
    MallocResult r;
    r.ok = false;
    r.requested_size = orig_size;
    r.alloc_size = p.alloc_size;
    r.oom_message = format_oom_message(facts);
    return r;
}

} // namespace xmem::sim
