// Drives a DeviceCachingAllocator with the events of a trace and collects what `xmem sim`
// reports. One function per input format; both sample the timeline after every event.
#pragma once

#include "allocator/allocator.h"
#include "common/result.h"
#include "replay/replay_loop.h"
#include "timeline/recorder.h"
#include "trace/compact_reader.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xmem::cli
{

// The OOM at which a replay stops (replay/replay_loop.h), for both input formats.
using OomReport = xmem::replay::OomReport;

struct SegmentRecord {
    std::string action; // segment_alloc, segment_free, segment_map, segment_unmap
    uint64_t addr = 0;
    uint64_t size = 0;
    uint64_t stream = 0;
    uint64_t event = 0; // snapshot entry index (real side) or event being replayed (sim side)
};

// --verify: what the GPU did against what the simulator did. The first divergence of any
// kind stops the comparison; `kind` says which check found it:
//   segment  a segment event differs (action, size, or address when both are real)
//   block    an alloc's simulated block address is not the recorded `addr`
//   oom      a recorded oom entry, replayed at the GPU's capacity then, did not fail
//   peak     at the end, a simulated peak differs from the trace's own
struct VerifyReport {
    bool ran = false;
    uint64_t compared = 0;       // segment events that matched before any divergence
    uint64_t blocks_matched = 0; // allocations whose simulated address was the recorded one
    uint64_t ooms_matched = 0;   // recorded OOMs the simulator also ran into
    uint64_t peaks_matched = 0;  // peaks compared at the end and equal
    bool diverged = false;
    std::string kind;                      // segment, block, oom, peak (see above)
    uint64_t divergence_event = 0;         // snapshot entry index where they part
    std::optional<SegmentRecord> expected; // what the GPU did (none: GPU did nothing more)
    std::optional<SegmentRecord> got;      // what the simulator did (none: nothing more)
    std::vector<std::string> pool_state;   // the simulated segments around the divergence
};

// A block live at entry 0 of a partial trace whose size neither the final state nor the
// split rule fixes: it is replayed at MIN bytes; the GPU's block was MIN..MAX bytes.
struct SizeBound {
    uint64_t addr = 0;
    uint64_t min = 0;
    uint64_t max = 0;
};

struct ReplayReport {
    std::string format;           // "compact" or "snapshot"
    uint64_t events = 0;          // trace events read (compact: records other than M S Z)
    uint64_t gpu_calls = 0;       // allocator calls made (malloc, free, record_stream, ...)
    std::optional<OomReport> oom; // the replay stops at the first OOM
    // Snapshots only:
    uint64_t unknown_frees = 0;       // frees of blocks allocated before recording began
    uint64_t real_ooms = 0;           // oom entries in the snapshot
    uint64_t real_reserved_peak = 0;  // Σ segment_alloc/map − segment_free/unmap, peak
    uint64_t real_requested_peak = 0; // Σ alloc − free_requested sizes, peak
    // Both real peaks include the state at entry 0 when a partial trace was rebuilt; they are
    // the recorded window's. Before recording the process held at least reserved_at_start.
    uint64_t reserved_at_start = 0;
    bool partial = false; // the trace did not start from an empty allocator
    std::string rebuild;  // one line: how the state at entry 0 was rebuilt, or why it was not
    std::vector<SizeBound> undetermined_sizes; // of the rebuild, in address order
    VerifyReport verify;
};

Result<ReplayReport> replay_compact(xmem::trace::CompactTraceReader &reader,
                                    xmem::sim::DeviceCachingAllocator &allocator,
                                    xmem::timeline::TimelineRecorder *timeline);

struct SnapshotReplayOptions {
    uint32_t device = 0;
    bool verify = false;
};

Result<ReplayReport> replay_snapshot(std::FILE *file, const std::string &name,
                                     const SnapshotReplayOptions &options,
                                     xmem::sim::DeviceCachingAllocator &allocator,
                                     xmem::timeline::TimelineRecorder *timeline);

} // namespace xmem::cli
