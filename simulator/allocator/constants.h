// The caching allocator's size constants (docs/allocator.md section 1; identical 1.13 → newest).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace xmem::sim
{

constexpr uint64_t kMiB = 1048576;
constexpr uint64_t kMinBlockSize = 512;            // allocator.md 1.1: the block granule
constexpr uint64_t kSmallSize = 1 * kMiB;          // allocator.md 1.2: small-pool limit
constexpr uint64_t kSmallBuffer = 2 * kMiB;        // allocator.md 1.3: small segment and page
constexpr uint64_t kLargeBuffer = 20 * kMiB;       // allocator.md 1.4: 1–10 MiB request segment
constexpr uint64_t kMinLargeAlloc = 10 * kMiB;     // allocator.md 1.5: own segment from here
constexpr uint64_t kRoundLarge = 2 * kMiB;         // allocator.md 1.6: their rounding unit
constexpr size_t kRoundUpPowerOfTwoIntervals = 16; // allocator.md 2.3: division slots
constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max(); // "no max_split_size"

} // namespace xmem::sim
