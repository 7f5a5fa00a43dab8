// Output of `xmem sim`: one JSON object (--json) or a short human summary.
#pragma once

#include "allocator/stats.h"
#include "cli/replay.h"

#include <cstdio>
#include <optional>
#include <string>

namespace xmem::cli
{

struct RunInfo {
    std::string trace;        // as given on the command line
    std::string torch;        // "2.6"
    std::string torch_source; // "--torch", "trace metadata", "default"
    std::string alloc_conf;
    std::optional<uint64_t> capacity;
    std::optional<std::string> timeline;
    double seconds = 0; // replay wall time (a timing field: golden tests ignore it)
};

// Keys in a fixed order: run info, events, oom, verify (snapshots), then every
// torch.cuda.memory_stats() key in PyTorch's (sorted) order, then timing fields last.
std::string sim_report_json(const RunInfo &run, const ReplayReport &report,
                            const xmem::sim::DeviceStats &stats);
void print_sim_summary(std::FILE *out, const RunInfo &run, const ReplayReport &report,
                       const xmem::sim::DeviceStats &stats);

} // namespace xmem::cli
