// Command line of xmem-profile:
//   xmem-profile --out TRACE [--steps N] [--threads N] [--timeout SECONDS] [--python PATH]
//                -- COMMAND ARGS...
#pragma once

// A relative path: the launcher is built on its own, without the daemon's targets.
#include "../../contract/defaults.h"

#include <string>
#include <vector>

namespace xmem::profile
{

// Every default and limit in one place, with its reason.
constexpr int k_default_steps = XMEM_DEFAULT_STEPS; // reasons in contract/defaults.h
constexpr int k_max_steps = XMEM_MAX_STEPS;
constexpr int k_default_timeout_s = 120; // resnet50 bs 32 takes ~20-50 s per CPU iteration
constexpr int k_max_timeout_s = 24 * 3600;
constexpr int k_max_threads = 1024;

struct Options {
    std::string out;
    int steps = k_default_steps;
    int threads = 0; // 0: every CPU this process may run on (docs/capture.md, "Threads")
    int timeout_s = k_default_timeout_s;
    std::string python;   // empty: XMEM_PYTHON, then /usr/bin/python3, then python3 on PATH
    bool verbose = false; // forward the script's stderr live instead of only on failure
    std::vector<std::string> command;
};

enum class ParseStatus { ok, help, version, error };

struct ParseResult {
    ParseStatus status = ParseStatus::ok;
    std::string error; // "xmem: ..." when status == error
};

ParseResult parse_options(int argc, const char *const *argv, Options *opts);
const char *usage_text();

} // namespace xmem::profile
