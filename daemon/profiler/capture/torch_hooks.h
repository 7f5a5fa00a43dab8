// The two places where capture touches LibTorch: the CPU allocator wrapper and the
// RecordFunction callback that keeps a per-thread stack of running ops. Only
// torch_hooks.cpp includes torch headers (LibTorch TUs are slow and memory-hungry).
#pragma once

#include <string>

namespace xmem::capture
{

// Wraps c10's CPU allocator (every thread, exact nbytes) and registers the global op callback.
// Idempotent. Returns false and sets *err when another allocator with higher priority is set.
bool install_torch_hooks(std::string *err);

} // namespace xmem::capture
