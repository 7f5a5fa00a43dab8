/*
 * sandbox_namespace.cpp — the PID namespace of a profile: whether xmemd can give one, and the
 * mounts its init makes (sandbox_namespace.h says why a namespace and not a cgroup).
 */
#include "sandbox_namespace.h"
#include "log.h"

#include <cerrno>
#include <cstring>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

namespace xmem::server
{

int namespace_enter_mounts()
{
    if (unshare(CLONE_NEWNS) != 0)
        return errno;
    // Slave, not private: mounts the host makes later (an automounted home directory) still
    // appear inside, and nothing mounted inside (the /proc below) propagates out.
    if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
        return errno;
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
        return errno;
    return 0;
}

namespace
{

// The exit status of a trial child: its errno, or 0.
int exit_errno(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : EINVAL;
}

// Sets up a namespace the way the keeper does, in a child that exits at once: 0, or the
// errno of the step that failed.
int namespace_trial()
{
    pid_t child = fork();
    if (child < 0)
        return errno;
    if (child == 0) {
        if (unshare(CLONE_NEWPID) != 0)
            _exit(errno);
        pid_t init = fork();
        if (init < 0)
            _exit(errno);
        if (init == 0)
            _exit(namespace_enter_mounts());
        int st = 0;
        while (waitpid(init, &st, 0) < 0 && errno == EINTR) {
        }
        _exit(exit_errno(st));
    }
    int st = 0;
    while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
    }
    return exit_errno(st);
}

} // namespace

SandboxIsolation sandbox_isolation_choice(bool daemon_is_root, int trial_errno)
{
    SandboxIsolation iso;
    if (!daemon_is_root)
        iso.why_not = "xmemd is not root";
    else if (trial_errno != 0)
        iso.why_not = std::string("the kernel refused one: ") + strerror(trial_errno);
    else
        iso.pid_namespace = true;
    return iso;
}

const SandboxIsolation &sandbox_isolation()
{
    static const SandboxIsolation iso = [] {
        bool root = geteuid() == 0;
        SandboxIsolation chosen = sandbox_isolation_choice(root, root ? namespace_trial() : 0);
        if (!chosen.pid_namespace)
            log_warn("profiles run without a PID namespace (%s): the keeper alone kills what "
                     "they start",
                     chosen.why_not.c_str());
        return chosen;
    }();
    return iso;
}

} // namespace xmem::server
