// The one replay loop: trace events -> a DeviceCachingAllocator, with the timeline sampled
// after every event. `xmem sim` (cli/replay_compact.cpp) and the estimate
// (analysis/replay.cpp) both drive it; what they do differently is spelled out in
// ReplayOptions and ReplayObserver rather than in a second loop.
//
// Only dev=g storages reach the allocator (h storages stay on the host in a GPU run); F and
// R events for an id without a block (a host storage, or one an analysis pass dropped) are
// skipped. The replay stops at the first OOM, after sampling that event.
#pragma once

#include "allocator/allocator.h"
#include "common/result.h"
#include "timeline/recorder.h"
#include "trace/event.h"

#include <cstdint>
#include <optional>
#include <string>

namespace xmem::replay
{

// Where the events come from: a streaming trace reader, or a workload held in memory.
class EventSource
{
  public:
    virtual ~EventSource() = default;
    // true: `event` holds the next event; false: no more events.
    virtual Result<bool> next(trace::TraceEvent &event) = 0;
};

// What a consumer learns besides the allocator's state, event by event. Each hook gets the
// 0-based index of the event. The default hooks do nothing.
class ReplayObserver
{
  public:
    virtual ~ReplayObserver() = default;
    // A GPU storage got its block. The returned tag is kept with the block and handed back
    // to on_free (the estimate keeps the storage's category there).
    virtual uint32_t on_alloc(uint64_t index, const trace::TraceEvent &event)
    {
        (void)index;
        (void)event;
        return 0;
    }
    // A GPU storage's block is freed; BYTES and TAG are those of its allocation.
    virtual void on_free(uint64_t index, uint64_t bytes, uint32_t tag)
    {
        (void)index;
        (void)bytes;
        (void)tag;
    }
    // An I record: iteration N starts.
    virtual void on_iteration(uint64_t index, uint32_t n)
    {
        (void)index;
        (void)n;
    }
    // After every event, with the allocator's current aggregate allocated and reserved bytes.
    virtual void after_event(uint64_t index, uint64_t allocated, uint64_t reserved)
    {
        (void)index;
        (void)allocated;
        (void)reserved;
    }
};

struct ReplayOptions {
    // `xmem sim` puts a timeline marker on every P record; the estimate only where the phase
    // changes (its passes insert events under the phase already in force).
    bool mark_repeated_phases = true;
    // Non-empty: an allocator refusal is reported as "xmem: NAME:LINE: the simulator refused
    // this event: WHY" (the events are the trace's lines). Empty: the allocator's message as
    // it is (the estimate's events are a rewritten workload, not lines of a file).
    std::string trace_name;
};

struct OomReport {
    uint64_t size = 0;       // bytes requested
    uint64_t alloc_size = 0; // segment size the allocator needed
    std::string message;     // PyTorch's message for the mirrored release
    uint64_t event = 0;      // 0-based event index
    uint64_t line = 0;       // compact traces: line of the A record (0 for snapshots)
};

struct ReplayCounts {
    uint64_t events = 0;          // events read
    uint64_t gpu_calls = 0;       // allocator calls (malloc, free, record_stream, ...)
    uint64_t mallocs = 0;         // malloc calls, the one that ran out of memory included
    std::optional<OomReport> oom; // set when the replay stopped at an OOM
};

// `timeline` and `observer` may be null. Fails on a source error or an allocator refusal
// (an internally inconsistent trace), never on an OOM, which is a result.
Result<ReplayCounts> replay_events(EventSource &source, sim::DeviceCachingAllocator &allocator,
                                   const ReplayOptions &options,
                                   timeline::TimelineRecorder *timeline, ReplayObserver *observer);

} // namespace xmem::replay
