// bound_script.h — the batch script a decision is bound to (docs/slurm.md, "What a decision
// is bound to"). xmemd reads it as the user (or builds it from sbatch --wrap's command, as
// sbatch does), signs its SHA-256, and refuses a request whose entrypoint or preamble is not
// what that script runs: otherwise a client could send big.sh's path with tiny.py's argv and
// get big.sh a small decision.
#ifndef XMEMD_BOUND_SCRIPT_H
#define XMEMD_BOUND_SCRIPT_H

#include "common/result.h"
#include "preamble.h"

#include <optional>
#include <string>
#include <vector>

namespace xmem::server
{

struct BoundScript {
    std::string name;   // as the user knows it: the path, or "the --wrap command"; "" if none
    std::string text;   // its bytes
    std::string sha256; // hex; "-" when the request names no script (srun, salloc, estimate)
};

// The script of a request: the file at script (relative to cwd), read with the caller's file
// identity (the user's), or the one sbatch builds from wrap. Fails when the file cannot be
// read whole, or is larger than Slurm would accept. The caller refuses script and wrap both.
Result<BoundScript> bound_script_read(const std::string &script, const std::string &wrap,
                                      const std::string &cwd);

// Why the request's argv and kept preamble lines are not what the script runs, read with the
// plugin's parser (daemon/script/xmem_script.h); nullopt when they are, or when there is no
// script. The reason is one "xmem: " line naming both commands and the fix.
std::optional<std::string> bound_script_mismatch(const BoundScript &s,
                                                 const std::vector<std::string> &argv,
                                                 const std::vector<ScriptLine> &preamble);

// A command as another user may see it (`xmem status`) and as a message shows it: words
// joined, cut short, no terminal control bytes.
std::string shown_argv(const std::vector<std::string> &argv);

} // namespace xmem::server
#endif
