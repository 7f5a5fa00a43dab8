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

// The closing advice: 2.1 suggests max_split_size_mb; 2.2+ (read in 2.6.0) expandable
// segments, 2.10 under the name PYTORCH_ALLOC_CONF, 2.11+ with a docs.pytorch.org link (the
// strings of each wheel's libc10_cuda.so, allocator.md 0).
std::string advice_2x(OomStyle style)
{
    if (style == OomStyle::v2_1)
        return " If reserved but unallocated memory is large try setting max_split_size_mb to avoid"
               " fragmentation.  See documentation for Memory Management and "
               "PYTORCH_CUDA_ALLOC_CONF";
    const char *variable =
        style == OomStyle::v2_10 ? "PYTORCH_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF";
    const char *link =
        style == OomStyle::v2_11
            ? "https://docs.pytorch.org/docs/stable/notes/"
              "cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf"
            : "https://pytorch.org/docs/stable/notes/cuda.html#environment-variables";
    return std::string(" If reserved but unallocated memory is large try setting ") + variable +
           "=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
           "Management  (" +
           link + ")";
}

// 2.1 introduced this layout (with the "capacty" typo), 2.2+ fix the typo. The process line
// is PyTorch's NVML report for this process: context, outside memory and reserved bytes.
std::string message_2x(const OomFacts &f)
{
    const bool v2_1 = f.style == OomStyle::v2_1;
    std::string allowed = f.has_allowed ? format_size(f.allowed) + " allowed; " : "";
    std::string process = "Including non-PyTorch memory, this process has " +
                          format_size(f.process_used) + " memory in use. ";
    const std::string advice = advice_2x(f.style);
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
