// PyTorch's out-of-memory message text per release (allocator.md 4.12) and format_size.
#pragma once

#include <cstdint>
#include <string>

#include "allocator/version.h"

namespace xmem::sim
{

struct OomFacts {
    OomStyle style = OomStyle::v2_2;
    uint64_t alloc_size = 0;   // "Tried to allocate" shows the segment (allocator.md 4.12)
    uint64_t device_total = 0; // device capacity
    uint64_t device_free = 0;  // cudaMemGetInfo free after the release steps
    uint64_t process_used = 0; // context + outside memory + reserved
    bool has_allowed = false;  // a per-process fraction is set
    uint64_t allowed = 0;
    uint64_t allocated = 0; // allocated_bytes.all.current
    uint64_t reserved = 0;  // reserved_bytes.all.current
};

// format_size (1.13 → newest): "N bytes", then KiB / MiB / GiB with two decimals.
std::string format_size(uint64_t size);
std::string format_oom_message(const OomFacts &f);

} // namespace xmem::sim
