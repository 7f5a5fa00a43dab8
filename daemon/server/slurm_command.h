// slurm_command.h — one Slurm client command (squeue, scontrol, scancel) run by xmemd as
// itself (root, its own environment, whose SLURM_CONF names the cluster), on a worker thread:
// the held-job scan (held_scan.cpp) and the profile jobs (profile_job.cpp) both use it.
#ifndef XMEMD_SLURM_COMMAND_H
#define XMEMD_SLURM_COMMAND_H

#include <cstddef>
#include <string>
#include <vector>

namespace xmem::server
{

// Runs argv (a bare name is looked up in PATH), stdin /dev/null, no shell: the texts are
// arguments. Keeps at most `max_out` bytes of its stdout in *out and reads the rest away, so
// a long listing cannot stop the command on a full pipe. Returns its exit status, 128 + the
// signal that ended it, or -1 with errno set when it could not start. Bounded by Slurm's
// own message timeout.
int slurm_command(const std::vector<std::string> &argv, std::string *out, std::size_t max_out);

} // namespace xmem::server
#endif
