// Size policy of the caching allocator as pure functions of the configuration:
// round_size (allocator.md 4.2) and get_allocation_size (allocator.md 4.4).
#pragma once

#include <cstddef>

#include "allocator/config.h"
#include "allocator/version.h"

namespace xmem::sim
{

// Mirrors roundup_power2_next_division, 1.13 → newest. d1_returns_size: releases before 2.4
// return the size unchanged for one division (the "D=1 quirk", PR #126830).
size_t roundup_power2_next_division(size_t size, size_t divisions, bool d1_returns_size);
// The divisions that apply to a request of `size` bytes (slot by log2, allocator.md 2.3; 1.13: the
// single value unless size > roundup_bypass_threshold).
size_t roundup_power2_divisions(size_t size, const AllocatorConfig &cfg, const VersionProfile &p);
// Mirrors round_size: 1.13 (bypass threshold, D > 0) and 2.x (per-interval slots, D > 1).
size_t round_size(size_t size, const AllocatorConfig &cfg, const VersionProfile &p);
// Mirrors get_allocation_size (1.13 → newest; newest uses large_segment_size for 1–10 MiB).
size_t get_allocation_size(size_t size, const AllocatorConfig &cfg);

} // namespace xmem::sim
