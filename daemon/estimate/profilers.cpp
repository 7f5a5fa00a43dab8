#include "profilers.h"

#include "analysis/paths.h"

#include <vector>

#ifndef XMEM_LIBEXECDIR
#define XMEM_LIBEXECDIR "/usr/local/libexec/xmem"
#endif

namespace xmem::estimate
{

const char *profiler_program(Profiler p)
{
    return p == Profiler::fast ? "xmem-profile-fast" : "xmem-profile";
}

Result<std::string> locate_profiler(Profiler p)
{
    std::string program = profiler_program(p);
    std::vector<std::string> tried = {analysis::self_exe_dir() + "/" + program,
                                      std::string(XMEM_LIBEXECDIR) + "/" + program};
    for (const std::string &path : tried)
        if (analysis::is_executable(path))
            return Result<std::string>::ok(path);
    return Result<std::string>::fail("xmem: " + program + " not found (looked at " + tried[0] +
                                     ", " + tried[1] + "); build it or pass --trace-in TRACE");
}

} // namespace xmem::estimate
