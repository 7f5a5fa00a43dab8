// Command line of xmem-estimate (`xmem estimate`). One option table; every bad argument is
// one "xmem: OPTION: what is wrong" line.
#pragma once

#include "common/result.h"
#include "contract/defaults.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xmem::estimate
{

struct EstimateOptions {
    std::string gpu = XMEM_DEFAULT_GPU;
    // --torch: the release whose allocator rules apply. Unset: the job's own torch, which
    // the trace records (docs/estimate.md, "Which PyTorch").
    std::optional<std::string> torch;
    std::optional<std::string> alloc_conf; // unset: the job's PYTORCH_CUDA_ALLOC_CONF
    unsigned steps = XMEM_DEFAULT_STEPS;   // optimizer steps profiled
    bool json = false;
    std::string timeline_out;
    std::string trace_in;
    std::string keep_trace;
    std::string analysed_trace; // --analysed-trace: the events the simulator replays
    std::string catalog;
    unsigned threads = 0;         // 0 = the profiler's default
    unsigned timeout_seconds = 0; // 0 = the profiler's default
    unsigned budget_seconds = 0;  // 0 = the profiler's default
    unsigned max_rss_mib = 0;     // 0 = the exact profiler's default (docs/capture.md, "Memory")
    std::optional<double> margin; // overrides k_limit_margin
    std::vector<std::string> command;
    // Which capture profiles the command (docs/fast-mode.md): "fast" (xmem-profile-fast,
    // meta tensors), "exact" (xmem-profile, real CPU run), "auto" (fast, else exact).
    std::string mode = "auto";
    // --sweep ARG=VALUES (sweep.h): one estimate per value of the command's own ARG.
    std::string sweep;
    uint64_t fit_bytes = 0;  // --fit SIZE: a value fits when its limit is within it
    unsigned sweep_jobs = 2; // --sweep-jobs N: estimates at once (each a profile of its own)
    std::vector<std::string> what_if; // --what-if KEY=VALUE, repeatable (what_if.h)
    // --exact-launcher, --fast-launcher WORDS: a command the profiler runs under, such as
    // xmemd's srun for a profile job (docs/profile-jobs.md); empty: run it here.
    std::vector<std::string> exact_launcher, fast_launcher;
    // --world-size N: the job as each rank of N processes, one per node-local GPU (ranks.h);
    // 0: not given (the launcher's count in the command, else 1).
    unsigned world_size = 0;
    bool help = false;
    // One line each for the user, printed before anything runs (deprecated spellings).
    std::vector<std::string> warnings;
};

Result<EstimateOptions> parse_options(int argc, char **argv);
// Why --mode exact refuses a world size above 1 (the option, or a launcher's count).
extern const char *const k_exact_refuses;
const char *usage_text();

} // namespace xmem::estimate
