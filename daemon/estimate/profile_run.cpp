#include "profile_run.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

namespace xmem::estimate
{

namespace
{

std::vector<std::string> profiler_argv(const ProfileRequest &req)
{
    std::vector<std::string> args = req.launcher;
    for (const std::string &a : {req.profiler, std::string("--out"), req.trace_out,
                                 std::string("--steps"), std::to_string(req.steps)})
        args.push_back(a);
    if (req.threads) {
        args.push_back("--threads");
        args.push_back(std::to_string(req.threads));
    }
    if (req.timeout_seconds) {
        args.push_back("--timeout");
        args.push_back(std::to_string(req.timeout_seconds));
    }
    if (req.budget_seconds) {
        args.push_back("--budget");
        args.push_back(std::to_string(req.budget_seconds));
    }
    if (req.max_rss_mib) {
        args.push_back("--max-rss");
        args.push_back(std::to_string(req.max_rss_mib));
    }
    if (!req.what_if.empty()) {
        args.push_back("--what-if");
        args.push_back(req.what_if);
    }
    args.push_back("--");
    args.insert(args.end(), req.command.begin(), req.command.end());
    return args;
}

} // namespace

Result<void> run_profiler(const ProfileRequest &req, int *exit_status)
{
    std::vector<std::string> args = profiler_argv(req);
    std::vector<char *> cargs;
    for (std::string &a : args)
        cargs.push_back(a.data());
    cargs.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        // EAGAIN: the process limit the caller set, said by the exit status (limit_met).
        if (exit_status && err == EAGAIN)
            *exit_status = XMEM_PROFILE_EXIT_NO_PROCESSES;
        return Result<void>::fail(std::string("xmem: cannot start xmem-profile: fork: ") +
                                  std::strerror(err));
    }
    if (pid == 0) {
        // The job's own stdout goes to stderr: this process's stdout carries the estimate
        // (--json, and the channel xmemd parses), and user code must never write into it.
        if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            _exit(127);
        execv(cargs[0], cargs.data());
        std::fprintf(stderr, "xmem: %s: cannot run: %s\n", cargs[0], std::strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return Result<void>::fail(std::string("xmem: waiting for xmem-profile: ") +
                                      std::strerror(errno));
    }
    if (exit_status)
        *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return Result<void>::success();
    std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                        : "signal " + std::to_string(WTERMSIG(status));
    std::string name = req.profiler.substr(req.profiler.rfind('/') + 1);
    if (!req.launcher.empty()) // srun's status: the profiler's own, or 128+N for signal N
        name += " under " + req.launcher[0].substr(req.launcher[0].rfind('/') + 1);
    return Result<void>::fail("xmem: profiling the job failed (" + name + " " + how +
                              "); its message above says why");
}

Result<std::string> make_temp_trace_path(const std::string &in)
{
    const char *tmp = std::getenv("TMPDIR");
    std::string dir = !in.empty() ? in : tmp && *tmp ? tmp : "/tmp";
    std::string path = dir + (in.empty() ? "/xmem-estimate-XXXXXX" : "/.xmem-trace-XXXXXX");
    int fd = mkstemp(path.data());
    if (fd < 0)
        return Result<std::string>::fail("xmem: cannot create a temporary trace file " + path +
                                         ": " + std::strerror(errno) +
                                         (in.empty() ? "; set TMPDIR to a writable directory"
                                                     : "; a profile job writes its trace in the "
                                                       "working directory: make it writable"));
    close(fd);
    return Result<std::string>::ok(path);
}

} // namespace xmem::estimate
