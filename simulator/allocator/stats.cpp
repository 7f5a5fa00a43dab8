// DeviceStats enumeration under torch.cuda.memory_stats() key names (allocator.md 10).
#include "allocator/stats.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace xmem::sim
{

namespace
{

using Entries = std::vector<std::pair<std::string, int64_t>>;

void add_stat(Entries &out, const std::string &prefix, const Stat &s)
{
    out.emplace_back(prefix + ".allocated", s.allocated);
    out.emplace_back(prefix + ".current", s.current);
    out.emplace_back(prefix + ".freed", s.freed);
    out.emplace_back(prefix + ".peak", s.peak);
}

void add_array(Entries &out, const char *name, const StatArray &a)
{
    static const char *const kPoolNames[kNumStatTypes] = {"all", "small_pool", "large_pool"};
    for (size_t t = 0; t < kNumStatTypes; ++t)
        add_stat(out, std::string(name) + "." + kPoolNames[t], a[t]);
}

Entries collect(const DeviceStats &s)
{
    const VersionProfile p = profile_for(s.torch);
    Entries out;
    add_array(out, "allocation", s.allocation);
    add_array(out, "segment", s.segment);
    add_array(out, "active", s.active);
    add_array(out, "inactive_split", s.inactive_split);
    add_array(out, "allocated_bytes", s.allocated_bytes);
    add_array(out, "reserved_bytes", s.reserved_bytes);
    add_array(out, "active_bytes", s.active_bytes);
    add_array(out, "inactive_split_bytes", s.inactive_split_bytes);
    if (p.requested_bytes)
        add_array(out, "requested_bytes", s.requested_bytes);
    out.emplace_back("num_alloc_retries", s.num_alloc_retries);
    out.emplace_back("num_ooms", s.num_ooms);
    add_stat(out, "oversize_allocations", s.oversize_allocations);
    add_stat(out, "oversize_segments", s.oversize_segments);
    if (p.device_counters) {
        out.emplace_back("num_sync_all_streams", s.num_sync_all_streams);
        out.emplace_back("num_device_alloc", s.num_device_alloc);
        out.emplace_back("num_device_free", s.num_device_free);
    }
    if (p.oom_rejection)
        out.emplace_back("num_oom_rejections", s.num_oom_rejections);
    out.emplace_back("max_split_size", s.max_split_size);
    // torch.cuda.memory_stats() sorts its flattened keys; so do we.
    std::sort(out.begin(), out.end());
    return out;
}

void reset_array(StatArray &a)
{
    for (Stat &s : a)
        s.reset_peak();
}

} // namespace

void DeviceStats::for_each(const std::function<void(std::string_view, int64_t)> &fn) const
{
    for (const auto &[key, value] : collect(*this))
        fn(key, value);
}

bool DeviceStats::get(std::string_view key, int64_t *value) const
{
    for (const auto &[k, v] : collect(*this)) {
        if (k == key) {
            *value = v;
            return true;
        }
    }
    return false;
}

void DeviceStats::reset_peak()
{
    for (StatArray *a : {&allocation, &segment, &active, &inactive_split, &allocated_bytes,
                         &reserved_bytes, &active_bytes, &inactive_split_bytes, &requested_bytes})
        reset_array(*a);
    oversize_allocations.reset_peak();
    oversize_segments.reset_peak();
}

} // namespace xmem::sim
