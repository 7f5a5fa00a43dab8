#include "side_by_side.h"

#include "contract/profile_status.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

namespace xmem::estimate
{

namespace
{

struct Child {
    pid_t pid = -1;
    int report = -1; // read end of the pipe its outcome comes back on
};

// The outcome as the child writes it: "DONE STATUS\nMESSAGE".
std::string encode(const WorkOutcome &w)
{
    return std::to_string(w.done ? 1 : 0) + " " + std::to_string(w.status) + "\n" + w.message;
}

bool decode(const std::string &text, WorkOutcome &w)
{
    int done = 0, status = 0;
    size_t nl = text.find('\n');
    if (nl == std::string::npos || std::sscanf(text.c_str(), "%d %d", &done, &status) != 2)
        return false;
    w.done = done == 1;
    w.status = status;
    w.message = text.substr(nl + 1);
    return true;
}

void write_all(int fd, const std::string &s)
{
    for (size_t at = 0; at < s.size();) {
        ssize_t n = write(fd, s.data() + at, s.size() - at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        at += static_cast<size_t>(n);
    }
}

std::string read_all(int fd)
{
    std::string s;
    char buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return s;
        s.append(buf, static_cast<size_t>(n));
    }
}

WorkOutcome cannot_start(int err)
{
    WorkOutcome w;
    // EAGAIN: the process limit the caller set, said by the exit status as for a profiler.
    w.status = err == EAGAIN ? XMEM_PROFILE_EXIT_NO_PROCESSES : 0;
    w.message = std::string("xmem: cannot start a rank's profile: fork: ") + std::strerror(err);
    return w;
}

Child start(const Work &work, WorkOutcome &failed)
{
    Child c;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        failed = cannot_start(errno);
        return c;
    }
    c.pid = fork();
    if (c.pid < 0) {
        failed = cannot_start(errno);
        close(fds[0]);
        close(fds[1]);
        return c;
    }
    if (c.pid == 0) {
        close(fds[0]);
        write_all(fds[1], encode(work()));
        _exit(0); // no atexit handler of the parent's runs twice
    }
    close(fds[1]);
    c.report = fds[0];
    return c;
}

WorkOutcome finish(Child &c)
{
    std::string text = read_all(c.report);
    close(c.report);
    int status = 0;
    while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    WorkOutcome w;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && decode(text, w))
        return w;
    w.message = "xmem: a rank's profile ended without its outcome (" +
                (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                     : "exit status " + std::to_string(WEXITSTATUS(status))) +
                ")";
    return w;
}

} // namespace

std::vector<WorkOutcome> run_side_by_side(const std::vector<Work> &work)
{
    std::vector<WorkOutcome> out(work.size());
    std::vector<Child> children(work.size());
    std::fflush(nullptr); // a child must not write the parent's buffered output again
    for (size_t i = 0; i < work.size(); ++i)
        children[i] = start(work[i], out[i]);
    for (size_t i = 0; i < work.size(); ++i)
        if (children[i].pid > 0)
            out[i] = finish(children[i]);
    return out;
}

std::vector<WorkOutcome> run_in_turn(const std::vector<Work> &work)
{
    std::vector<WorkOutcome> out;
    for (const Work &w : work) {
        out.push_back(w());
        if (!out.back().done)
            break;
    }
    return out;
}

unsigned usable_cpus()
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    return static_cast<unsigned>(CPU_COUNT(&set));
}

} // namespace xmem::estimate
