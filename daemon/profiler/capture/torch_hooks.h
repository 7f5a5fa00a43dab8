// The two places where capture touches LibTorch: the CPU allocator wrapper and the
// RecordFunction callback that keeps a per-thread stack of running ops. Only
// torch_hooks.cpp includes torch headers (LibTorch TUs are slow and memory-hungry).
#pragma once

#include "common/result.h"

namespace xmem::capture
{

// Wraps c10's CPU allocator (every thread, exact nbytes) and registers the global op callback.
// Idempotent. Fails when another allocator with higher priority is set.
Result<void> install_torch_hooks();

} // namespace xmem::capture
