// The zygote (docs/estimate.md, "What a sweep costs"): in fast mode, one Python that imports
// torch once (xmem_fast/zygote.py) and forks the job of each value of a sweep, or of each
// rank role of a multi-GPU job (docs/estimate.md, "Ranks"). Each still runs as a single
// estimate does, `xmem-estimate` then `xmem-profile-fast` with its limits: only the job's Python,
// finding XMEM_ZYGOTE_SOCKET, hands itself to the zygote instead of importing torch
// (xmem_fast/attach.py).
#pragma once

#include "estimate_options.h"

#include <string>
#include <sys/types.h>

namespace xmem::estimate
{

struct Zygote {
    pid_t pid = -1;
    int input = -1;     // its stdin: closing it ends the zygote
    std::string dir;    // private directory of the socket
    std::string socket; // what XMEM_ZYGOTE_SOCKET names
};

// Who the zygote serves, for the line saying why it did not start: the option that asked
// for it ("--sweep") and what happens without it ("each value imports torch itself ...").
struct ZygoteUsers {
    std::string option;
    std::string without;
};

// Starts the zygote for the command O runs and waits until it is ready. False, after one
// line on stderr saying why where the user would expect it, when the values must each start
// their own Python: not fast mode, not `python SCRIPT ...`, or the zygote cannot fork
// safely (more than one thread after `import torch`) or did not start.
bool start_zygote(const EstimateOptions &o, const ZygoteUsers &users, Zygote &z);

// Ends it (closes its stdin, waits) and removes its socket.
void stop_zygote(Zygote &z);

} // namespace xmem::estimate
