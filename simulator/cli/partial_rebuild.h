// A partial snapshot (recording began after the process had allocated) is rebuilt before it
// is replayed: the state at its first entry follows from the final `segments` by walking the
// trace backwards (an alloc means the block was not live before it, a free_requested that
// it was; a segment_alloc that the segment did not exist, a segment_free that it did). Each
// segment held at entry 0 is then tiled with its live blocks and the free gaps between them.
//
// Block sizes the final state does not give (blocks freed during the recording) are the
// request rounded as the allocator rounds it. A gap of at most 1 MiB after a large-pool block
// cannot be a free block of its own (the allocator only splits off more than 1 MiB there,
// allocator.md 4.13), so it is the block's unsplit tail; such sizes are counted as inferred.
// After a larger gap the tail is unknown: the block may hold up to 1 MiB (an oversize block,
// >= max_split_size: up to the rounding tolerance) of it, as long as the free block after it
// stays over 1 MiB. Such a block is replayed at its rounded size and its bounds are reported.
#pragma once

#include "allocator/allocator.h"
#include "cli/replay.h"
#include "trace/snapshot_reader.h"

#include <cstdint>
#include <string>
#include <vector>

namespace xmem::cli
{

struct RebuildPlan {
    bool needed = false; // the trace does not start from an empty allocator
    std::string why_not; // non-empty: needed, but the state cannot be rebuilt (one line)
    std::vector<xmem::sim::SeedSegment> segments;    // the state at entry 0
    std::vector<std::pair<uint64_t, uint64_t>> live; // live blocks at entry 0: addr, requested
    uint64_t reserved = 0;                           // bytes of those segments
    uint64_t requested = 0;                          // requested bytes of those blocks
    uint64_t inferred_sizes = 0;         // from the split rule or a later allocation (see above)
    std::vector<SizeBound> undetermined; // block sizes only bounded (see above)
};

// EVENTS: one device's trace; FINAL: that device's final segments (empty if the snapshot
// has none); ALLOCATOR: for its rounding.
RebuildPlan plan_rebuild(const std::vector<xmem::trace::SnapshotEvent> &events,
                         const std::vector<xmem::trace::SnapshotSegment> &final,
                         const xmem::sim::DeviceCachingAllocator &allocator);

// "rebuilt the state at entry 0 from the final segments: ..." or "cannot rebuild ...: why".
std::string describe_rebuild(const RebuildPlan &plan);

} // namespace xmem::cli
