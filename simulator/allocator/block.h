// Block, BlockPool, AllocParams: the caching allocator's data model (allocator.md 3).
// A segment is a doubly linked list of Blocks covering it; a pool's ordered set holds only
// its free, event-free, mapped blocks (allocator.md 3.4). Blocks come from a BlockArena and are
// recycled, so steady-state malloc/free does no heap allocation.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "allocator/node_arena.h"
#include "allocator/stats.h"
#include "allocator/trace.h"

namespace xmem::sim
{

struct BlockPool;
struct ExpandableSegment;

struct Block {
    uint64_t ptr = 0;
    uint64_t size = 0;
    uint64_t requested_size = 0; // what the caller asked for (allocator.md 3.3, 2.0+ stat)
    StreamId stream = 0;         // allocation stream, never changes
    BlockPool *pool = nullptr;
    Block *prev = nullptr; // neighbours in the segment
    Block *next = nullptr;
    ExpandableSegment *expandable_segment = nullptr; // 2.1+; null for cudaMalloc segments
    uint64_t gc_count_base = 0; // pool call counter when it entered the free set (allocator.md 4.7)
    uint32_t event_count = 0;   // outstanding stream-use events (allocator.md 5.2)
    bool allocated = false;
    bool mapped = true;                // false only for unmapped expandable ranges
    std::vector<StreamId> stream_uses; // other streams that used it (allocator.md 6.2); tiny

    bool is_split() const { return prev != nullptr || next != nullptr; } // allocator.md 3.5
};

// The set stores the ordering key next to the Block pointer so comparisons do not chase
// pointers. A block's key fields never change while it is in a set.
struct FreeKey {
    StreamId stream;
    uint64_t size;
    uint64_t ptr;
    Block *block;
};
// BlockComparatorSize: (stream, size, address) — best fit, ties by lowest address
// (allocator.md 3.4).
struct BlockComparatorSize {
    bool operator()(const FreeKey &a, const FreeKey &b) const
    {
        if (a.stream != b.stream)
            return a.stream < b.stream;
        if (a.size != b.size)
            return a.size < b.size;
        return a.ptr < b.ptr;
    }
};
// BlockComparatorAddress: (stream, address) — for unmapped expandable ranges
// (allocator.md 3.4, 2.1+).
struct BlockComparatorAddress {
    bool operator()(const FreeKey &a, const FreeKey &b) const
    {
        if (a.stream != b.stream)
            return a.stream < b.stream;
        return a.ptr < b.ptr;
    }
};
using FreeBlockSet = std::set<FreeKey, BlockComparatorSize, ArenaAllocator<FreeKey>>;
using UnmappedBlockSet = std::set<FreeKey, BlockComparatorAddress, ArenaAllocator<FreeKey>>;

inline FreeKey key_of(const Block *b)
{
    return FreeKey{b->stream, b->size, b->ptr, const_cast<Block *>(b)};
}

struct BlockPool {
    BlockPool(bool small, NodeArena *arena)
        : blocks(BlockComparatorSize{}, ArenaAllocator<FreeKey>(arena)),
          unmapped(BlockComparatorAddress{}, ArenaAllocator<FreeKey>(arena)), is_small(small)
    {
    }

    // 2.x insert_into_blocks: the block's GC age starts now (allocator.md 4.7).
    void insert_into_blocks(Block *b)
    {
        b->gc_count_base = get_free_blocks_call_count;
        blocks.insert(key_of(b));
    }
    void erase_from_blocks(const Block *b) { blocks.erase(key_of(b)); }
    uint64_t gc_age(const Block *b) const { return get_free_blocks_call_count - b->gc_count_base; }

    FreeBlockSet blocks;
    UnmappedBlockSet unmapped;
    bool is_small;
    uint64_t get_free_blocks_call_count = 0;
    StatType stat_type() const { return is_small ? StatType::small_pool : StatType::large_pool; }
};

// One reserved virtual-address range that grows by mapping pages (allocator.md 7.1, 2.1+).
struct ExpandableSegment {
    uint64_t base;
    uint64_t size;      // reserved VA bytes (whole pages)
    uint64_t page_size; // 2 MiB small, 20 MiB (large_segment_size) large
    StreamId stream;
};

// The parameters of one malloc as they travel through the fallback chain.
struct AllocParams {
    StreamId stream;
    size_t size; // rounded request (allocator.md 4.2)
    BlockPool *pool;
    size_t alloc_size; // segment size if a new one is needed (allocator.md 4.4)
    Block *block = nullptr;
    StatType stat_type() const { return pool->stat_type(); }
};

// A free waiting for record_stream uses to finish (allocator.md 5.2), done at malloc number `due`.
struct PendingFree {
    Block *block;
    uint64_t due;
};

// Recycles Block objects: memory grows with the peak number of live blocks only.
class BlockArena
{
  public:
    Block *make()
    {
        if (m_free.empty())
            grow();
        Block *b = m_free.back();
        m_free.pop_back();
        return b;
    }
    void recycle(Block *b) { m_free.push_back(b); }

  private:
    static constexpr size_t kBlocksPerChunk = 256;
    void grow()
    {
        m_chunks.emplace_back(new Block[kBlocksPerChunk]);
        for (size_t i = kBlocksPerChunk; i-- > 0;)
            m_free.push_back(&m_chunks.back()[i]);
    }
    std::vector<std::unique_ptr<Block[]>> m_chunks;
    std::vector<Block *> m_free;
};

} // namespace xmem::sim
