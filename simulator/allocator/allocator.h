// DeviceCachingAllocator: a step-by-step simulation of PyTorch's CUDA caching allocator
// (c10/cuda/CUDACachingAllocator.cpp) for one device, for releases 1.13 through the newest.
//
// The policy, in short (rule numbers of docs/allocator.md in brackets):
//  * Requests are rounded to 512 B multiples, or to power-of-two divisions when configured
//    [4.2]. Rounded sizes <= 1 MiB come from the small pool, larger ones from the large
//    pool [4.3].
//  * Each pool keeps its free blocks ordered by (stream, size, address); a request takes the
//    smallest free block of its own stream that fits [4.5]. Blocks of other streams are
//    never used [6.1].
//  * Failing that, the allocator cudaMallocs a segment: 2 MiB for small requests, 20 MiB for
//    1–10 MiB, the request rounded to 2 MiB above that [4.4]; with expandable segments it
//    maps pages of a growing address range instead [7].
//  * If the device (or the per-process fraction [8]) is full it frees cached segments in
//    three escalating steps and retries; only then is it out of memory [4.7–4.12].
//  * A block larger than needed is split when the tail is worth keeping [4.13]; a freed
//    block merges with free neighbours [5.3]. Memory returns to CUDA only through
//    garbage collection, release of oversize blocks, or empty_cache [5.4].
//
// No globals, no locks: one object per simulated device, configured by value.
// Memory use is proportional to the live blocks, never to the number of calls.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "allocator/block.h"
#include "allocator/config.h"
#include "allocator/ptr_map.h"
#include "common/result.h"
#include "allocator/stats.h"
#include "allocator/trace.h"
#include "allocator/version.h"

namespace xmem::sim
{

// A read-only picture of one segment and its blocks in address order (for reports such as
// the pool state printed at a --verify divergence; O(blocks) to build).
struct BlockView {
    uint64_t ptr = 0;
    uint64_t size = 0;
    uint64_t requested_size = 0;
    bool allocated = false;
    bool mapped = true;
};
struct SegmentView {
    uint64_t addr = 0;
    uint64_t size = 0;
    StreamId stream = 0;
    bool small = false;
    bool expandable = false;
    std::vector<BlockView> blocks;
};

// A segment as it stood before a partial trace began: its blocks in address order, tiling it.
struct SeedBlock {
    uint64_t size = 0;
    uint64_t requested_size = 0; // allocated blocks only
    bool allocated = false;
};
struct SeedSegment {
    uint64_t addr = 0;
    StreamId stream = 0;
    bool small = false;
    std::vector<SeedBlock> blocks;
};

struct MallocResult {
    bool ok = false;
    uint64_t ptr = 0;            // block address (0 on OOM)
    uint64_t block_size = 0;     // bytes counted in allocated_bytes (rounded + unsplit slack)
    uint64_t requested_size = 0; // the size asked for
    uint64_t alloc_size = 0;     // segment size the allocator needed (what an OOM reports)
    std::string oom_message;     // PyTorch's message for this release (allocator.md 4.12), on OOM
};

class DeviceCachingAllocator
{
  public:
    // CFG must have passed cfg.validate(): callers check it first and report its error as a
    // Result. A config that did not is an internal invariant violation, so this throws
    // std::invalid_argument rather than return a value nobody expects to fail.
    explicit DeviceCachingAllocator(AllocatorConfig cfg);
    ~DeviceCachingAllocator();
    DeviceCachingAllocator(const DeviceCachingAllocator &) = delete;
    DeviceCachingAllocator &operator=(const DeviceCachingAllocator &) = delete;

    // size 0 returns ok with ptr 0 and touches nothing (allocate(0) never reaches PyTorch's
    // allocator). On OOM the state is what PyTorch leaves: the cache released (allocator.md 4.12).
    MallocResult malloc(uint64_t size, StreamId stream = 0);
    // ptr from a successful malloc (0 is a no-op); anything else fails and changes nothing.
    Result<void> free(uint64_t ptr);
    // The block at ptr was used on `stream`: its free is deferred until that use completes
    // (allocator.md 6.2). Fails for a pointer that is not allocated.
    Result<void> record_stream(uint64_t ptr, StreamId stream);
    void empty_cache();                         // allocator.md 9 = release_cached_blocks
    Result<void> set_memory_fraction(double f); // allocator.md 8, 0 <= f <= 1
    void reset_peak_stats();
    // The device size cudaMalloc is checked against (0 = unlimited). A replay of a recorded
    // OOM sets it to what the GPU had at that moment, then puts the configured one back.
    void set_device_total_bytes(uint64_t bytes) { m_cfg.device_total_bytes = bytes; }
    // Recreates SEG with its blocks, allocated ones live, and counts it in the stats: the state
    // a prelude of mallocs and frees would have left before a partial trace began (seed.cpp).
    // cudaMalloc'd segments only; fails, changing nothing, on a block that is not a 512 B
    // multiple or a segment that overlaps an allocated block.
    Result<void> seed_segment(const SeedSegment &seg);
    // round_size of this release and configuration (allocator.md 4.2).
    uint64_t rounded_size(uint64_t size) const { return round_size(size); }
    // Every segment, sorted by address (inspect.cpp).
    std::vector<SegmentView> segments() const;

    const DeviceStats &stats() const { return m_stats; }
    const AllocatorConfig &config() const { return m_cfg; }
    // Bytes obtained from CUDA (reserved incl. mapped expandable pages) (allocator.md 3.6).
    uint64_t total_allocated_memory() const { return m_total_allocated_memory; }

    void set_observer(TraceObserver *observer) { m_observer = observer; } // nullptr = none
    void set_address_source(SegmentAddressSource *source) { m_address_source = source; }

    // Walks every segment and checks the invariants (blocks tile their segment, free blocks
    // are exactly the pool's contents, stats agree with the blocks). For tests; O(blocks).
    Result<void> check_invariants() const;

  private:
    // The steps of malloc, named and ordered as in PyTorch (allocator.cpp).
    void process_events();
    size_t round_size(size_t size) const;
    BlockPool &get_pool(size_t size);
    size_t get_allocation_size(size_t size) const;
    bool get_free_block(AllocParams &p);
    bool alloc_block(AllocParams &p, bool is_retry);
    MallocResult out_of_memory(const AllocParams &p, uint64_t orig_size);
    MallocResult alloc_found_block(AllocParams &p, uint64_t orig_size);
    bool should_split(const Block *block, size_t size) const;
    void free_block(Block *block);
    size_t try_merge_blocks(Block *dst, Block *src, BlockPool &pool);
    void insert_events(Block *block);
    // Returning memory to CUDA (allocator_release.cpp).
    void garbage_collect_cached_blocks();
    bool release_available_cached_blocks(const AllocParams &p);
    bool release_cached_blocks();
    void synchronize_and_free_events();
    void release_blocks(BlockPool &pool);
    void release_block(Block *block);
    // Expandable segments (expandable.cpp).
    Block *try_allocate_expandable_block(StreamId stream, BlockPool &pool, size_t size);
    Block *find_expandable_block(StreamId stream, BlockPool &pool, size_t size);
    bool map_block(Block *to_map, size_t size);
    void unmap_block(Block *block);
    void release_expandable_segment(Block *block);
    // Helpers.
    bool gc_enabled() const;
    bool device_can_allocate(uint64_t bytes) const;
    uint64_t next_segment_address(uint64_t size, StreamId stream);
    Block *new_block(StreamId stream, uint64_t size, BlockPool *pool, uint64_t ptr);
    void delete_block(Block *block);
    void trace(TraceAction action, uint64_t addr, uint64_t size, StreamId stream)
    {
        if (m_observer != nullptr)
            m_observer->on_trace(TraceEntry{action, addr, size, stream});
    }

    AllocatorConfig m_cfg;
    VersionProfile m_profile;
    DeviceStats m_stats;
    NodeArena m_node_arena; // must outlive the pools' sets
    BlockArena m_block_arena;
    BlockPool m_large_blocks;
    BlockPool m_small_blocks;
    PtrMap m_active_blocks; // allocated blocks by address
    std::deque<PendingFree> m_pending_frees;
    std::vector<std::unique_ptr<ExpandableSegment>> m_expandable_segments;
    uint64_t m_total_allocated_memory = 0;
    bool m_set_fraction = false;
    uint64_t m_allowed_memory_maximum = 0;
    uint64_t m_malloc_count = 0; // clock for deferred frees (allocator.md 4.1)
    uint64_t m_next_address;     // synthetic segment addresses
    TraceObserver *m_observer = nullptr;
    SegmentAddressSource *m_address_source = nullptr;
};

} // namespace xmem::sim
