// The exact capture's own memory (docs/capture.md, "Memory"). It runs the job for real on the
// CPU, so it holds every tensor the GPU would, plus the CPU kernels' scratch: a GPT-2 124M
// capture at batch 4 took 10 GB of RSS. The launcher bounds it and stops the job with a clear
// line before the machine (or the login node's per-user share) runs out.
#pragma once

#include <cstdint>
#include <sys/types.h>

namespace xmem::profile
{

// Resident bytes of every process in process group PGID (the script, DataLoader workers).
// Pages shared between them (fork's copy-on-write) count once per process: an over-estimate,
// which errs towards stopping early.
uint64_t group_rss_bytes(pid_t pgid);

// The default limit: a share (k_rss_share) of the least of what this machine has available
// now, what our cgroup may still use, and RLIMIT_AS (a sandbox's cap, e.g. xmemd's).
uint64_t default_rss_limit();

// The part of the memory found free that the capture may use; the rest is for the system, the
// page cache and the other users of a login node.
constexpr double k_rss_share = 0.8;

} // namespace xmem::profile
