// Pass 4: replay the GPU-side workload through the simulated caching allocator of the
// target release, and measure what explains its peaks.
#pragma once

#include "allocator/config.h"
#include "common/result.h"
#include "analysis/attribution.h"
#include "analysis/categorize.h"
#include "analysis/workload.h"
#include "timeline/recorder.h"

#include <cstdint>
#include <string>
#include <vector>

namespace xmem::analysis
{

struct IterationPeak {
    uint32_t iteration = 0;
    uint64_t reserved = 0;  // highest reserved bytes during the iteration
    uint64_t allocated = 0; // highest allocated (block) bytes during the iteration
};

struct ReplayResult {
    uint64_t reserved_peak = 0;
    uint64_t allocated_peak = 0;
    uint64_t allocated_peak_event = 0; // the event index at which it was first reached
    uint64_t first_reserved_peak = 0;  // iterations 0 and 1
    uint64_t steady_reserved_peak = 0; // iterations 2.. (0 if the trace has none)
    bool has_steady = false;
    // Requested bytes of the live storages, by category, when allocated bytes peaked.
    CategoryBytes live_at_peak{};
    // The same bytes by module and by op (attribution.h).
    Attribution attribution;
    // Highest live requested bytes of each category at any point (the "activation term").
    CategoryBytes category_peak{};
    std::vector<IterationPeak> iterations;
    uint64_t mallocs = 0;
    bool oom = false;
    std::string oom_message;
};

// `timeline` may be null. Fails only on an internally inconsistent workload.
Result<ReplayResult> replay(const Workload &work, const sim::AllocatorConfig &cfg,
                            timeline::TimelineRecorder *timeline);

// Replays the workload again into TIMELINE with its layers stacked (timeline_stack.h): by
// category and by the modules FIRST ranked at its peak, FIRST being replay()'s result on the
// same workload and config.
Result<void> replay_timeline(const Workload &work, const sim::AllocatorConfig &cfg,
                             const ReplayResult &first, timeline::TimelineRecorder &timeline);

} // namespace xmem::analysis
