// Which profiler captures the job, and where its program is: beside this executable (a build
// tree's bin/ or an install's libexec/xmem), else XMEM_LIBEXECDIR.
#pragma once

#include "common/result.h"

#include <string>

namespace xmem::estimate
{

enum class Profiler {
    exact, // xmem-profile: the job runs on the CPU under the capture (docs/capture.md)
    fast,  // xmem-profile-fast: the job runs on fake tensors (docs/fast-mode.md)
};

const char *profiler_program(Profiler p);

// The profiler's path, or one line naming where it was looked for and the fix.
Result<std::string> locate_profiler(Profiler p);

} // namespace xmem::estimate
