// AllocatorConfig: everything that steers the simulated allocator, passed in by value.
// parse() reads PYTORCH_CUDA_ALLOC_CONF with the grammar of the chosen release (allocator.md 2.2
// for 1.13, allocator.md 2.3 for 2.x); the device model (capacity, memory used outside the
// allocator, per-process fraction) is set by the caller.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "allocator/constants.h"
#include "common/result.h"
#include "allocator/version.h"

namespace xmem::sim
{

struct AllocatorConfig {
    TorchVersion torch;
    // max_split_size_mb in bytes; kUnlimited = not set (allocator.md 2.2).
    size_t max_split_size = kUnlimited;
    // max_non_split_rounding_mb in bytes (2.6+); 1.13–2.5 use kLargeBuffer (allocator.md 4.5).
    size_t max_non_split_rounding = kLargeBuffer;
    // Divisions per size interval (allocator.md 2.3). 1.13 has one value: all 16 slots hold it.
    std::array<size_t, kRoundUpPowerOfTwoIntervals> roundup_power2_divisions{};
    // roundup_bypass_threshold_mb in bytes (1.13 only); kUnlimited = not set.
    size_t roundup_bypass_threshold = kUnlimited;
    double garbage_collection_threshold = 0.0; // 0 = off (allocator.md 4.7)
    bool expandable_segments = false;          // 2.1+ (allocator.md 7)
    // large_segment_size_mb in bytes (newest, PR #172056): 1–10 MiB segment size and
    // large expandable page; kLargeBuffer elsewhere.
    size_t large_segment_size = kLargeBuffer;

    // Device model (allocator.md 4.8): cudaMalloc succeeds iff
    // device_used_outside_bytes + total_allocated_memory + alloc_size <= device_total_bytes.
    uint64_t device_total_bytes = 0;        // 0 = unlimited
    uint64_t device_used_outside_bytes = 0; // CUDA context, NCCL, other libraries
    // set_per_process_memory_fraction applied at construction (0 <= f <= 1).
    std::optional<double> memory_fraction;

    // Simulator setting, not a PyTorch key: a free deferred by record_stream completes at
    // the process_events of the N-th malloc after it (allocator.md 4.1, "the GPU finished by
    // then").
    uint32_t event_completion_delay = 1;

    // Defaults of release v overlaid with alloc_conf ("" = defaults). Unknown keys and bad
    // values fail with "xmem: PYTORCH_CUDA_ALLOC_CONF: <key>: <what is wrong>".
    static Result<AllocatorConfig> parse(std::string_view alloc_conf, TorchVersion v);
    // Defaults of release v (what PyTorch uses with PYTORCH_CUDA_ALLOC_CONF unset).
    static AllocatorConfig defaults(TorchVersion v);
    // Checks the fields a caller may set directly (fraction range, outside <= total, ...).
    Result<void> validate() const;
};

} // namespace xmem::sim
