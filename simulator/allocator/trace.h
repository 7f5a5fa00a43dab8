// TraceEntry: what the simulated allocator did, with the action names of PyTorch's
// memory-snapshot device_traces (allocator.md 13.3), so a simulated trace reads like a real one.
#pragma once

#include <cstdint>

namespace xmem::sim
{

using StreamId = uint64_t; // 0 = the default stream

enum class TraceAction : uint8_t {
    alloc,          // block handed out; size = requested bytes
    free_requested, // user free; allocated_bytes drops here; size = requested bytes
    free_completed, // block back in its pool (after pending stream uses); size = requested
    segment_alloc,  // cudaMalloc of a segment; size = segment bytes
    segment_free,   // cudaFree of a segment
    segment_map,    // expandable pages mapped
    segment_unmap,  // expandable pages unmapped
    oom,            // addr = free device bytes, size = rounded request
};

// Exactly PyTorch's names ("alloc", "free_requested", ..., "oom").
const char *to_string(TraceAction action);

struct TraceEntry {
    TraceAction action;
    uint64_t addr;
    uint64_t size;
    StreamId stream;
};

struct TraceObserver {
    virtual ~TraceObserver() = default;
    virtual void on_trace(const TraceEntry &entry) = 0;
};

// Lets a verifier replaying a real snapshot dictate each new segment's base address
// (best-fit ties are broken by address, allocator.md 13.5). Called once per cudaMalloc'd segment
// and once per expandable-segment address reservation. Must return a non-zero address.
struct SegmentAddressSource {
    virtual ~SegmentAddressSource() = default;
    virtual uint64_t next_segment_address(uint64_t size, StreamId stream) = 0;
};

} // namespace xmem::sim
