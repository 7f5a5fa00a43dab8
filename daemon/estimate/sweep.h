// `xmem estimate --sweep ARG=V1,V2,... | ARG=LO..HI`: what would fit (issue 30).
//
// One estimate per value of one of the training command's own arguments (`--batch-size`),
// each a child `xmem-estimate --json` of this same executable, up to --sweep-jobs at once
// for a list (in fast mode their jobs fork from one zygote that imported torch: zygote.h); for an
// interval, a binary search for the largest value that fits, which assumes memory grows with the
// value. A value fits when its limit is within --fit SIZE (a share), or, without --fit, when its
// estimate fits the GPU. A value that fails is named with its error's first line, and the sweep
// goes on.
#pragma once

#include "common/result.h"
#include "estimate_options.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xmem::estimate
{

struct SweepSpec {
    std::string arg;                 // "--batch-size"
    std::vector<std::string> values; // a list, in the order given
    bool interval = false;           // LO..HI: search instead of listing
    uint64_t lo = 0, hi = 0;
};

// "--batch-size=8,16,32" or "--batch-size=1..512".
Result<SweepSpec> parse_sweep(const std::string &text);

// COMMAND with ARG set to VALUE: `ARG VALUE` or `ARG=VALUE` rewritten where it stands, else
// `ARG=VALUE` appended (an argparse script takes it either way).
std::vector<std::string> with_value(const std::vector<std::string> &command, const std::string &arg,
                                    const std::string &value);

struct SweepPoint {
    std::string value;
    bool ok = false;   // the estimate ran; else `error` says why
    std::string error; // its first line
    uint64_t peak_bytes = 0, limit_bytes = 0;
    bool fits = false;
};

// Runs the sweep O.sweep names and prints it (text, or JSON with --json). 0 once the sweep
// ran, whatever fits; 2 when nothing could be started.
int run_sweep(const EstimateOptions &o);

} // namespace xmem::estimate
