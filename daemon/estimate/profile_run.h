// Runs the job under xmem-profile to capture its trace (the "profile" half of an estimate).
#pragma once

#include "common/result.h"
#include "contract/defaults.h"
#include "contract/profile_status.h"

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
    std::string what_if;               // a change the capture applies inside the job (what_if.h)
    std::vector<std::string> launcher; // the profiler runs under it (srun ...); empty: here
};

// The profilers' exit statuses this side acts on (contract/profile_status.h,
// docs/profile-status.md). Fast mode cannot run this job: try the exact capture.
constexpr int k_profile_unsupported = XMEM_PROFILE_EXIT_UNSUPPORTED;
// The job's environment cannot run a capture: the other capture would fail alike.
constexpr int k_profile_environment = XMEM_PROFILE_EXIT_ENVIRONMENT;
// The job passed the exact capture's memory limit; the profiler's own line names fast mode.
constexpr int k_profile_memory = XMEM_PROFILE_EXIT_MEMORY;
// The capture cannot apply the --what-if change to this job; its one line says why.
constexpr int k_profile_refused = XMEM_PROFILE_EXIT_REFUSED;

// Runs the profiler and waits. A non-zero exit is an error naming the status (also left in
// *exit_status when given); the profiler's own stderr reaches the user unchanged, and so
// does the job's stdout, on stderr.
Result<void> run_profiler(const ProfileRequest &req, int *exit_status = nullptr);

// A fresh temporary file path for the trace (in DIR, else $TMPDIR or /tmp); the file
// exists, empty.
Result<std::string> make_temp_trace_path(const std::string &dir = "");

} // namespace xmem::estimate
