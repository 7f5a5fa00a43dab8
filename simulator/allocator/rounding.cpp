#include "allocator/rounding.h"

#include "allocator/constants.h"

namespace xmem::sim
{

namespace
{

bool is_power_of_two(size_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}
unsigned floor_log2(size_t v)
{
    return 63u - static_cast<unsigned>(__builtin_clzll(v));
}
size_t round_up_to(size_t size, size_t unit)
{
    return unit * ((size + unit - 1) / unit);
}

} // namespace

// 1.13: returns size for D <= 1 (and size <= 4); 2.4+: D >= 2 guaranteed by the caller.
size_t roundup_power2_next_division(size_t size, size_t divisions, bool d1_returns_size)
{
    if (d1_returns_size && (size <= 4 || divisions <= 1))
        return size;
    if (is_power_of_two(size))
        return size;
    // Divide the space between the two surrounding powers of two into equal steps.
    const size_t power2_floor = size_t{1} << floor_log2(size);
    const size_t power2_division = power2_floor >> floor_log2(divisions);
    if (power2_division == 0)
        return power2_floor << 1;
    const size_t round_size_floor = size & ~(power2_division - 1);
    return round_size_floor == size ? size : round_size_floor + power2_division;
}

size_t roundup_power2_divisions(size_t size, const AllocatorConfig &cfg, const VersionProfile &p)
{
    if (!p.roundup_per_interval)
        return size > cfg.roundup_bypass_threshold ? 0 : cfg.roundup_power2_divisions[0];
    // Slot i covers [2^(20+i), 2^(21+i)); slot 0 also takes everything smaller, slot 15
    // everything larger (allocator.md 2.3).
    const int index = static_cast<int>(floor_log2(size)) - 20;
    const int clamped = index < 0 ? 0 : (index > 15 ? 15 : index);
    return cfg.roundup_power2_divisions[static_cast<size_t>(clamped)];
}

size_t round_size(size_t size, const AllocatorConfig &cfg, const VersionProfile &p)
{
    if (size < kMinBlockSize)
        return kMinBlockSize;
    const size_t divisions = roundup_power2_divisions(size, cfg, p);
    // 1.13 (and up to 2.3) enter the division routine for D > 0; 2.4+ only for D > 1
    // (allocator.md 4.2).
    const size_t min_divisions = p.roundup_d1_returns_size ? 1 : 2;
    if (divisions >= min_divisions && size > kMinBlockSize * divisions)
        return roundup_power2_next_division(size, divisions, p.roundup_d1_returns_size);
    return round_up_to(size, kMinBlockSize);
}

size_t get_allocation_size(size_t size, const AllocatorConfig &cfg)
{
    if (size <= kSmallSize)
        return kSmallBuffer;
    if (size < kMinLargeAlloc)
        return cfg.large_segment_size;
    return round_up_to(size, kRoundLarge);
}

} // namespace xmem::sim
