/*
 * sandbox_namespace.h — whether a profile runs in a PID namespace of its own, and the steps
 * that set one up (sandbox.cpp's keeper uses them between fork() and execve()).
 *
 * Why a PID namespace and not a cgroup: when a namespace's init ends, the kernel kills every
 * process in it, whatever session, process group or tracer it has, and none of them can leave
 * it; that is the whole guarantee the sandbox needs (issue 26, M2 and L3). A cgroup gives the
 * same with cgroup.kill, but only where xmemd is given a delegated subtree of cgroup v2 (a
 * systemd Delegate= unit, or a writable hierarchy), which `make demo`, the lab and a start
 * by hand do not have; a namespace needs only root, which xmemd has wherever it drops
 * privileges for a profile. Memory and CPU are bounded by rlimits already.
 */
#ifndef XMEMD_SANDBOX_NAMESPACE_H
#define XMEMD_SANDBOX_NAMESPACE_H

#include <string>

namespace xmem::server
{

struct SandboxIsolation {
    bool pid_namespace = false;
    std::string why_not; // when pid_namespace is false: for the log line
};

// The choice, from whether xmemd is root and what a trial set-up returned (0, or its errno).
SandboxIsolation sandbox_isolation_choice(bool daemon_is_root, int trial_errno);

// The choice for this xmemd: tried once (a child and grandchild that set up a namespace and
// exit), logged once when profiles must run without one.
const SandboxIsolation &sandbox_isolation();

// In the first process of a new PID namespace (its init; still root): a mount namespace of
// its own whose mounts do not reach the host's, and a /proc of the new PID namespace, so the
// profile's pids and /proc agree. Returns 0 or the errno of the step that failed.
// Async-signal-safe: it runs in a child of the multithreaded daemon.
int namespace_enter_mounts();

} // namespace xmem::server
#endif
