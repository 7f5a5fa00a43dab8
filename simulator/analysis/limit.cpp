#include "analysis/limit.h"

#include <algorithm>
#include <cmath>

namespace xmem::analysis
{

uint64_t recommended_limit(uint64_t peak_bytes, uint64_t gpu_total_bytes, double margin)
{
    constexpr uint64_t mib = 1048576;
    double with_margin = std::ceil(double(peak_bytes) * (1.0 + margin));
    uint64_t limit = (static_cast<uint64_t>(with_margin) + mib - 1) / mib * mib;
    // A limit above the whole GPU means "the whole GPU"; a job that does not fit keeps its
    // uncapped limit so that limit >= peak always holds.
    if (gpu_total_bytes != 0 && peak_bytes <= gpu_total_bytes)
        limit = std::min(limit, gpu_total_bytes);
    return limit;
}

} // namespace xmem::analysis
