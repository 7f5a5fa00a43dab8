// for_each_selected_stat_type: every update goes to "all" and to the block's pool
// (allocator.md 4.15).
#pragma once

#include "allocator/stats.h"

namespace xmem::sim
{

inline void increase(StatArray &a, StatType pool, uint64_t amount)
{
    a[static_cast<size_t>(StatType::aggregate)].increase(amount);
    a[static_cast<size_t>(pool)].increase(amount);
}
inline void decrease(StatArray &a, StatType pool, uint64_t amount)
{
    a[static_cast<size_t>(StatType::aggregate)].decrease(amount);
    a[static_cast<size_t>(pool)].decrease(amount);
}
inline void update(StatArray &a, StatType pool, int64_t delta)
{
    a[static_cast<size_t>(StatType::aggregate)].update(delta);
    a[static_cast<size_t>(pool)].update(delta);
}

} // namespace xmem::sim
