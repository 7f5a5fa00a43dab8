// A multi-GPU job's ranks (docs/estimate.md, "Ranks"): its world size from --world-size or
// from the launcher in its command (torchrun, python -m torch.distributed.run, accelerate
// launch, deepspeed), the command one rank runs, and the environment torchrun gives that rank.
#pragma once

#include "common/result.h"

#include <string>
#include <utility>
#include <vector>

namespace xmem::estimate
{

struct Launch {
    std::vector<std::string> command; // what one rank runs: the launcher's script, as Python
    unsigned world_size = 1;
    unsigned local_world_size = 1; // ranks on one node: one process per node-local GPU
    std::string launcher;          // "torchrun", "accelerate launch", "deepspeed", or "" (none)
    // Environment the launcher gives each rank beyond torchrun's (accelerate's precision).
    std::vector<std::pair<std::string, std::string>> env;
    bool local_rank_argument = false; // deepspeed's: the script gets --local_rank=R
};

// COMMAND as each rank runs it. WORLD_SIZE_OPTION: --world-size (0: not given, the
// launcher's count or 1). A launcher whose count xmem cannot read is one line naming
// --world-size as the fix.
Result<Launch> read_launch(const std::vector<std::string> &command, unsigned world_size_option);

// The ranks profiled, one per role: rank 0 (which logs and saves in most scripts) and,
// when there are others, rank 1, which stands for ranks 1 to N-1.
std::vector<unsigned> profiled_ranks(unsigned world_size);

// The rank a listed rank shares its profile with (profiled_ranks).
unsigned profile_of(unsigned rank);

// What rank RANK runs: COMMAND, with --local_rank=R where the launcher passes it.
std::vector<std::string> rank_command(const Launch &launch, unsigned rank);

// Sets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT as torchrun
// does, the launcher's own, and XMEM_WORLD_SIZE (the fast capture's process group).
void export_rank(const Launch &launch, unsigned rank);

} // namespace xmem::estimate
