/*
 * sandbox.h — run the estimator as the requesting user, in its working directory, in its own
 * PID namespace (where xmemd is root: sandbox_namespace.h) and process group, with resource
 * limits, no GPU, a scrubbed environment, lowered priority, and bounded captured output;
 * nothing it starts outlives it. Blocking: call it from a worker thread.
 */
#ifndef XMEMD_SANDBOX_H
#define XMEMD_SANDBOX_H

#include "config.h"
#include "user.h"

#include <atomic>
#include <string>
#include <vector>

namespace xmem::server
{

struct SandboxSpec {
    UserIdentity user;
    std::string cwd;
    std::vector<std::string> argv; // argv[0] is an absolute path
    std::vector<std::string> env;  // complete environment, "KEY=VALUE"
    SandboxLimits limits;
    int wall_ms = 0;
};

struct SandboxRun {
    bool spawned = false;
    std::string spawn_error; // why it did not start (stage and errno)
    int exit_status = -1;    // when it exited normally
    int term_signal = 0;     // when a signal ended it
    bool wall_expired = false;
    bool cancelled = false;       // the daemon stopped it (drain timeout)
    bool output_overflow = false; // stdout exceeded the bound; the group was killed
    double cpu_seconds = 0;       // user + system time of the estimator and its reaped children
    double wall_seconds = 0;
    std::string out; // stdout, at most limits.output_kb
    std::string err; // the last limits.output_kb bytes of stderr
};

// The environment a profile sees: only the allowed variables from the request, the user's
// identity variables, and every GPU hidden.
std::vector<std::string>
sandbox_environment(const UserIdentity &u,
                    const std::vector<std::pair<std::string, std::string>> &allowed);

// "NAME=value" of the variables every profile gets whatever the job sets: no GPU visible,
// XMEM_PROFILING=1. The preamble sets them again after the job's own lines (preamble.cpp).
const std::vector<std::string> &sandbox_forced_variables();

// Runs the child to completion or until a limit/cancel; never throws.
SandboxRun sandbox_run(const SandboxSpec &spec, const std::atomic<bool> *cancel);

} // namespace xmem::server
#endif
