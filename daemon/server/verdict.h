// verdict.h — the profiler's command line and the meaning of its result (docs/protocol.md,
// "Profiler contract").
#ifndef XMEMD_VERDICT_H
#define XMEMD_VERDICT_H

#include "outcome.h"
#include "sandbox.h"

#include "allocator/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace xmem::server
{

struct Estimate {
    uint64_t peak_bytes = 0;
    uint64_t limit_bytes = 0;
    uint64_t gpu_memory_bytes = 0;
    bool fits = false;
    std::string gpu;
    std::string torch;
    std::string mode;
    double profile_seconds = 0;
    double analyze_seconds = 0;
    std::string breakdown_json = "{}"; // kept verbatim for the reply and the ledger
};

// estimator argv + [--gpu G] [--torch V] --steps N -- entrypoint argv
std::vector<std::string> estimator_argv(const std::vector<std::string> &estimator,
                                        const std::string &gpu, const std::string &torch, int steps,
                                        const std::vector<std::string> &entry);

struct ProfileVerdict {
    Outcome outcome = Outcome::internal_error;
    std::string message; // one line for the user; includes the stderr tail on failure
    Estimate estimate;   // valid when outcome is estimated or exceeds_gpu
};

// Classifies a finished run (limits first, then exit status, then the JSON on stdout).
ProfileVerdict profile_verdict(const SandboxRun &run, const SandboxLimits &lim);

// Parses the estimator's JSON; the error names the first missing or mistyped field.
Result<Estimate> parse_estimate(const std::string &json);

} // namespace xmem::server
#endif
