// Command line of `xmem sim` / `xmem-sim`, parsed into a value so it can be unit-tested.
#pragma once

#include "common/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xmem::cli
{

struct SimOptions {
    std::optional<std::string> torch;    // --torch VERSION (default: trace metadata, else 2.6)
    std::string alloc_conf;              // --alloc-conf STRING (PYTORCH_CUDA_ALLOC_CONF syntax)
    std::optional<uint64_t> capacity;    // --capacity BYTES (default: unlimited)
    bool json = false;                   // --json
    std::optional<std::string> timeline; // --timeline OUT.html
    bool verify = false;                 // --verify (snapshots only)
    uint32_t device = 0;                 // --device N (snapshots: which device_traces entry)
    bool from_pickle = false;            // --from-pickle FILE: TRACE is a pickled snapshot
    bool help = false;                   // --help / -h: print usage, exit 0
    std::string trace;                   // TRACE ("-" = stdin)
};

// Accepts "--opt VALUE" and "--opt=VALUE". Errors are "xmem: sim: <what> (see --help)".
Result<SimOptions> parse_sim_options(const std::vector<std::string> &args);

const char *sim_usage();

} // namespace xmem::cli
