// Stat / StatType / DeviceStats: the counters behind torch.cuda.memory_stats(), named as
// PyTorch names them (allocator.md 10) so a simulated run can be diffed key by key with a real one.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string_view>

#include "allocator/version.h"

namespace xmem::sim
{

// Indexes of a StatArray, as in c10: AGGREGATE ("all"), SMALL_POOL, LARGE_POOL.
enum class StatType : uint8_t { aggregate = 0, small_pool = 1, large_pool = 2 };
constexpr size_t kNumStatTypes = 3;

struct Stat {
    int64_t current = 0;
    int64_t peak = 0;
    int64_t allocated = 0; // sum of all increases
    int64_t freed = 0;     // sum of all decreases

    void increase(uint64_t amount)
    {
        current += static_cast<int64_t>(amount);
        allocated += static_cast<int64_t>(amount);
        if (current > peak)
            peak = current;
    }
    void decrease(uint64_t amount)
    {
        current -= static_cast<int64_t>(amount);
        freed += static_cast<int64_t>(amount);
    }
    // 1.13's update_stat(stat, signed delta): one call for a net change (free_block).
    void update(int64_t delta)
    {
        if (delta > 0)
            increase(static_cast<uint64_t>(delta));
        if (delta < 0)
            decrease(static_cast<uint64_t>(-delta));
    }
    void reset_peak() { peak = current; }
};

using StatArray = std::array<Stat, kNumStatTypes>;

struct DeviceStats {
    StatArray allocation;     // blocks handed out
    StatArray segment;        // cudaMalloc'd segments (not expandable)
    StatArray active;         // allocated or pending-free blocks
    StatArray inactive_split; // free blocks inside split segments
    StatArray allocated_bytes;
    StatArray reserved_bytes;
    StatArray active_bytes;
    StatArray inactive_split_bytes;
    StatArray requested_bytes; // 2.0+
    int64_t num_alloc_retries = 0;
    int64_t num_ooms = 0;
    Stat oversize_allocations;
    Stat oversize_segments;
    int64_t num_sync_all_streams = 0; // 2.0+
    int64_t num_device_alloc = 0;     // 2.0+
    int64_t num_device_free = 0;      // 2.0+
    // 2.12+: allocations refused before cudaMalloc by throw_on_cudamalloc_oom, which the
    // simulator does not enable (allocator.md 2.3), so it stays 0.
    int64_t num_oom_rejections = 0;
    int64_t max_split_size = -1; // SIZE_MAX shows as -1, as in PyTorch
    TorchVersion torch;          // decides which keys exist

    // Every (key, value) of torch.cuda.memory_stats() for this release, in PyTorch's order
    // (the Python dict is sorted by key), e.g. "allocated_bytes.all.peak".
    void for_each(const std::function<void(std::string_view key, int64_t value)> &fn) const;
    // Looks one key up; false if this release has no such key.
    bool get(std::string_view key, int64_t *value) const;
    // reset_peak_memory_stats(): every peak becomes its current value.
    void reset_peak();
};

} // namespace xmem::sim
