// The caching allocator's size constants (allocator-spec §1; identical 1.13 → newest).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace xmem::sim
{

constexpr uint64_t kMiB = 1048576;
constexpr uint64_t kMinBlockSize = 512;            // §1.1 every request is a multiple of this
constexpr uint64_t kSmallSize = 1 * kMiB;          // §1.2 largest request served by the small pool
constexpr uint64_t kSmallBuffer = 2 * kMiB;        // §1.3 small-pool segment (and expandable page)
constexpr uint64_t kLargeBuffer = 20 * kMiB;       // §1.4 segment for 1–10 MiB requests
constexpr uint64_t kMinLargeAlloc = 10 * kMiB;     // §1.5 requests at/above get their own segment
constexpr uint64_t kRoundLarge = 2 * kMiB;         // §1.6 rounding unit of those segments
constexpr size_t kRoundUpPowerOfTwoIntervals = 16; // §2.3 slots of roundup_power2_divisions
constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max(); // "no max_split_size"

} // namespace xmem::sim
