// Command line of xmem-profile:
//   xmem-profile --out TRACE [--steps N] [--threads N] [--timeout SECONDS] [--budget SECONDS]
//                [--max-rss MIB] [--python PATH] [--what-if CHANGE]
//                -- COMMAND ARGS...
#pragma once

// A relative path: the launcher is built on its own, without the daemon's targets.
#include "../../contract/defaults.h"

#include <algorithm>
#include <string>
#include <vector>

namespace xmem::profile
{

// Every default and limit in one place, with its reason.
constexpr int k_default_steps = XMEM_DEFAULT_STEPS; // reasons in contract/defaults.h
constexpr int k_max_steps = XMEM_MAX_STEPS;
constexpr int k_default_timeout_s = 120; // resnet50 bs 32 takes ~20-50 s per CPU iteration
// The whole profile, set-up and evaluation before the first step included: below xmemd's
// default wall limit (600 s, daemon/server/defaults.h), so a slow job gets this launcher's
// hint and its stderr rather than the sandbox's kill. A first-use library build is not counted.
constexpr int k_default_budget_s = 540;
constexpr int k_max_timeout_s = 24 * 3600;
constexpr int k_max_threads = 1024;
constexpr int k_max_rss_mib = 1 << 30; // 1 PiB: any machine's memory fits below

// --max-rss values that are not a size.
constexpr int k_rss_default = -1;  // derived from the machine (memory.h, default_rss_limit)
constexpr int k_rss_unlimited = 0; // --max-rss 0: no limit

struct Options {
    std::string out;
    int steps = k_default_steps;
    int threads = 0; // 0: every CPU this process may run on (docs/capture.md, "Threads")
    int timeout_s = k_default_timeout_s;
    int budget_s = 0; // 0: budget_for(), below
    int max_rss_mib = k_rss_default;
    std::string python;   // empty: XMEM_PYTHON, then /usr/bin/python3, then python3 on PATH
    bool verbose = false; // forward the script's stderr live instead of only on failure
    // --what-if: one change the capture applies inside the job (amp=bf16, ...); the capture
    // checks it and refuses what it cannot apply faithfully (docs/estimate.md, "What if").
    std::string what_if;
    std::vector<std::string> command;
};

// The whole run's budget when --budget is not given: k_default_budget_s, or more when --timeout
// was raised for slow steps, so that a raised per-step timeout is not undercut.
inline int budget_for(const Options &o)
{
    if (o.budget_s > 0)
        return o.budget_s;
    long derived = static_cast<long>(o.timeout_s) * (o.steps + 1);
    return static_cast<int>(
        std::min<long>(std::max<long>(k_default_budget_s, derived), k_max_timeout_s));
}

enum class ParseStatus { ok, help, version, error };

struct ParseResult {
    ParseStatus status = ParseStatus::ok;
    std::string error; // "xmem: ..." when status == error
};

ParseResult parse_options(int argc, const char *const *argv, Options *opts);
const char *usage_text();

} // namespace xmem::profile
