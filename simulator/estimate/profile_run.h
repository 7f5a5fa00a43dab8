// Runs the job under xmem-profile to capture its trace (the "profile" half of an estimate).
#pragma once

#include "allocator/result.h"

#include <string>
#include <vector>

namespace xmem::estimate {

struct ProfileRequest {
    std::string profiler;       // path of xmem-profile
    std::string trace_out;      // where the trace goes
    unsigned steps = 3;
    unsigned threads = 0;       // 0: profiler default
    unsigned timeout_seconds = 0;
    std::vector<std::string> command;
};

// Runs the profiler and waits. A non-zero exit is an error naming the status; the
// profiler's own stderr reaches the user unchanged.
Result<void> run_profiler(const ProfileRequest &req);

// A fresh temporary file path for the trace ($TMPDIR or /tmp); the file exists, empty.
Result<std::string> make_temp_trace_path();

} // namespace xmem::estimate
