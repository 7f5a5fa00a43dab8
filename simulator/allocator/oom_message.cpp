#include "allocator/oom_message.h"

#include <cstdio>

namespace xmem::sim
{

std::string format_size(uint64_t size)
{
    char buf[64];
    if (size <= 1024) {
        snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(size));
    } else if (size <= 1048576) {
        snprintf(buf, sizeof buf, "%.2f KiB", static_cast<double>(size) / 1024.0);
    } else if (size <= 1073741824ull) {
        snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(size) / 1048576.0);
    } else {
        snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(size) / 1073741824.0);
    }
    return buf;
}

namespace
{

// 1.13 and 2.0 (read in 1.13.1's CUDACachingAllocator.cpp).
std::string message_1_13(const OomFacts &f)
{
    std::string allowed = f.has_allowed ? format_size(f.allowed) + " allowed; " : "";
    return "CUDA out of memory. Tried to allocate " + format_size(f.alloc_size) + " (GPU 0; " +
           format_size(f.device_total) + " total capacity; " + format_size(f.allocated) +
           " already allocated; " + format_size(f.device_free) + " free; " + allowed +
           format_size(f.reserved) +
           " reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
           "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and "
           "PYTORCH_CUDA_ALLOC_CONF";
}

// 2.1 introduced this layout (with the "capacty" typo and the max_split_size_mb advice);
// 2.2+ (read in 2.6.0) fix the typo and recommend expandable segments. The process line is
// PyTorch's NVML report for this process: context, outside memory and reserved bytes.
std::string message_2x(const OomFacts &f)
{
    const bool v2_1 = f.style == OomStyle::v2_1;
    std::string allowed = f.has_allowed ? format_size(f.allowed) + " allowed; " : "";
    std::string process = "Including non-PyTorch memory, this process has " +
                          format_size(f.process_used) + " memory in use. ";
    std::string advice =
        v2_1
            ? " If reserved but unallocated memory is large try setting max_split_size_mb to avoid"
              " fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"
            : " If reserved but unallocated memory is large try setting"
              " PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See"
              " documentation for Memory Management "
              " (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";
    const uint64_t unallocated = f.reserved > f.allocated ? f.reserved - f.allocated : 0;
    return "CUDA out of memory. Tried to allocate " + format_size(f.alloc_size) +
           ". GPU 0 has a total " + (v2_1 ? "capacty" : "capacity") + " of " +
           format_size(f.device_total) + " of which " + format_size(f.device_free) + " is free. " +
           process + allowed + "Of the allocated memory " + format_size(f.allocated) +
           " is allocated by PyTorch, and " + format_size(unallocated) +
           " is reserved by PyTorch but unallocated." + advice;
}

} // namespace

std::string format_oom_message(const OomFacts &f)
{
    return f.style == OomStyle::v1_13 ? message_1_13(f) : message_2x(f);
}

} // namespace xmem::sim
