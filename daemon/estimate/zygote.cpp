#include "zygote.h"

#include "profilers.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace xmem::estimate
{

namespace
{

// Longest wait for the zygote's import of torch (a cold import on a loaded node takes 10 s).
constexpr int k_ready_s = 300;

bool plain_python_command(const std::vector<std::string> &command)
{
    if (command.size() < 2 || command[1].empty() || command[1][0] == '-')
        return false;
    std::string name = command[0].substr(command[0].rfind('/') + 1);
    return name.rfind("python", 0) == 0;
}

// The zygote's lines until "ready" or its end: "" when ready, else its last line (why).
std::string wait_ready(int fd)
{
    std::string text, last = "it ended without a word";
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(k_ready_s);
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, static_cast<int>(left)) == 0)
            return "it was not ready within " + std::to_string(k_ready_s) + " s";
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return last;
        text.append(buf, static_cast<size_t>(n));
        for (size_t nl; (nl = text.find('\n')) != std::string::npos; text.erase(0, nl + 1)) {
            std::string line = text.substr(0, nl);
            if (line == "ready")
                return "";
            if (!line.empty())
                last = line;
        }
    }
}

bool spawn(const std::string &profiler, const std::string &python, Zygote &z, int &output)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return false;
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return false;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDERR_FILENO);
    const char *argv[] = {profiler.c_str(), "--zygote", z.socket.c_str(), python.c_str(), nullptr};
    int rc = posix_spawn(&z.pid, argv[0], &fa, nullptr, const_cast<char **>(argv), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    if (rc != 0) {
        close(in[1]);
        close(out[0]);
        z.pid = -1;
        return false;
    }
    z.input = in[1];
    output = out[0];
    return true;
}

void fallback(const ZygoteUsers &users, const std::string &why)
{
    std::fprintf(stderr, "xmem: %s: %s; %s\n", users.option.c_str(), why.c_str(),
                 users.without.c_str());
}

} // namespace

bool start_zygote(const EstimateOptions &o, const ZygoteUsers &users, Zygote &z)
{
    if (o.mode == "exact" || !plain_python_command(o.command) || !o.fast_launcher.empty())
        return false; // nothing to save: not fast mode here, or not a Python the zygote can be
    auto profiler = locate_profiler(Profiler::fast);
    if (!profiler.ok())
        return false; // each value says so itself
    const char *tmp = std::getenv("TMPDIR");
    z.dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/xmem-zygote.XXXXXX";
    if (!mkdtemp(z.dir.data())) { // mode 0700: no other user reaches the socket
        fallback(users,
                 std::string("cannot make a directory for its socket: ") + std::strerror(errno));
        z.dir.clear();
        return false;
    }
    z.socket = z.dir + "/socket";
    int output = -1;
    if (z.socket.size() >= sizeof(sockaddr_un::sun_path) ||
        !spawn(profiler.value(), o.command[0], z, output)) {
        fallback(users, "cannot start the zygote (" + z.socket + ")");
        stop_zygote(z);
        return false;
    }
    std::string why = wait_ready(output);
    close(output);
    if (why.empty())
        return true;
    fallback(users, "the zygote cannot fork: " + why);
    stop_zygote(z);
    return false;
}

void stop_zygote(Zygote &z)
{
    if (z.input >= 0)
        close(z.input);
    if (z.pid > 0) {
        kill(z.pid, SIGTERM); // it ends at once on its stdin's end; this covers a stuck one
        while (waitpid(z.pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    if (!z.socket.empty())
        unlink(z.socket.c_str());
    if (!z.dir.empty())
        rmdir(z.dir.c_str());
    z = Zygote();
}

} // namespace xmem::estimate
