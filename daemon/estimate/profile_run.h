// Runs the job under xmem-profile to capture its trace (the "profile" half of an estimate).
#pragma once

#include "allocator/result.h"
#include "contract/defaults.h"

#include <string>
#include <vector>

namespace xmem::estimate
{

struct ProfileRequest {
    std::string profiler;  // path of xmem-profile
    std::string trace_out; // where the trace goes
    unsigned steps = XMEM_DEFAULT_STEPS;
    unsigned threads = 0; // 0: profiler default
    unsigned timeout_seconds = 0;
    unsigned budget_seconds = 0;
    unsigned max_rss_mib = 0; // 0: xmem-profile's default; fast mode holds no tensor data
    std::vector<std::string> command;
};

// xmem-profile-fast's exit status for "fast mode cannot run this job" (docs/fast-mode.md).
constexpr int k_profile_unsupported = 3;
// Either profiler's for "the job's environment cannot run a capture" (no interpreter on its
// PATH, no torch, no capture library; docs/capture.md): the other capture would fail alike.
constexpr int k_profile_environment = 4;
// xmem-profile's for "the job passed the exact capture's memory limit" (docs/capture.md,
// "Memory"); its own line names fast mode, the way out.
constexpr int k_profile_memory = 5;

// Runs the profiler and waits. A non-zero exit is an error naming the status (also left in
// *exit_status when given); the profiler's own stderr reaches the user unchanged, and so
// does the job's stdout, on stderr.
Result<void> run_profiler(const ProfileRequest &req, int *exit_status = nullptr);

// A fresh temporary file path for the trace ($TMPDIR or /tmp); the file exists, empty.
Result<std::string> make_temp_trace_path();

} // namespace xmem::estimate
