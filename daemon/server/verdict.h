// verdict.h — the estimator's command line and the meaning of its result (docs/protocol.md,
// "Estimator contract").
#ifndef XMEMD_VERDICT_H
#define XMEMD_VERDICT_H

#include "outcome.h"
#include "sandbox.h"

#include "common/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
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
    std::string breakdown_json = "{}"; // for the ledger
    // Parsed once, on the worker that parsed the result (depth bounded there), and shared
    // by the cache and every reply: the loop thread never parses what a profile printed.
    std::shared_ptr<const nlohmann::json> breakdown;
};

// estimator argv + [--gpu G] [--torch V] --steps N [--world-size W] -- entrypoint argv;
// --world-size only past one rank, so a single-GPU estimator line stays what it was.
std::vector<std::string> estimator_argv(const std::vector<std::string> &estimator,
                                        const std::string &gpu, const std::string &torch, int steps,
                                        const std::vector<std::string> &entry, long world_size = 1);

struct ProfileVerdict {
    Outcome outcome = Outcome::internal_error;
    std::string message; // one line for the user; includes the stderr tail on failure
    Estimate estimate;   // valid when outcome is estimated or exceeds_gpu
};

// Classifies a finished run (limits first, then exit status, then the JSON on stdout).
ProfileVerdict profile_verdict(const SandboxRun &run, const SandboxLimits &lim);

// Parses the estimator's JSON; the error names the first missing or mistyped field. Text
// larger than k_profile_json_max_bytes or nested deeper than k_json_max_depth is refused
// before it is parsed; a `gpu` outside gpu_name_valid()'s grammar is refused too.
Result<Estimate> parse_estimate(const std::string &json);

// A GPU name as the catalog spells names and aliases ("A100-40GB", "NVIDIA H100 80GB HBM3"):
// 1..k_gpu_name_max_bytes of letters, digits, '-', '_', '.', and single inner spaces. Nothing
// else, so a profile's `gpu` cannot carry '=', quotes or control bytes into the decision.
bool gpu_name_valid(const std::string &gpu);

} // namespace xmem::server
#endif
