// Work done side by side in forked children of xmem-estimate: a multi-GPU job's rank roles
// are profiled at once (docs/estimate.md, "Ranks"). Each role sets its own environment
// (RANK, LOCAL_RANK, ...), which threads of one process could not do: setenv is
// process-wide.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace xmem::estimate
{

// What one piece of work ended with: done, or the profiler's exit status (0 when none ran)
// and the one line saying why.
struct WorkOutcome {
    bool done = false;
    int status = 0;
    std::string message;
};

using Work = std::function<WorkOutcome()>;

// Runs every piece of WORK, each in a child process of its own, all at once, and waits for
// them all; the outcomes keep WORK's order. A child that cannot start, or that dies, says so
// in its outcome.
std::vector<WorkOutcome> run_side_by_side(const std::vector<Work> &work);

// Runs WORK here, one piece after another, up to the first that fails; the outcomes keep
// WORK's order and end with that one.
std::vector<WorkOutcome> run_in_turn(const std::vector<Work> &work);

// The CPUs this process may run on (its affinity mask, which Slurm and xmemd's limits set):
// with one, side by side gains nothing and holds twice the memory at once.
unsigned usable_cpus();

} // namespace xmem::estimate
