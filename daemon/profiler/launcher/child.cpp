#include "child.h"
#include "memory.h"

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace xmem::profile
{

namespace
{

constexpr size_t k_tail_bytes = 64 * 1024; // enough for any Python traceback worth reading
constexpr int k_term_grace_ms = 3000;      // SIGTERM lets the script's finally/atexit run
constexpr int k_drain_ms = 500;            // output still in the pipes after the script exits

volatile sig_atomic_t g_interrupted = 0;
void on_signal(int)
{
    g_interrupted = 1;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

[[noreturn]] void exec_child(const ChildSpec &spec, int status_w, int stderr_w)
{
    setpgid(0, 0);
    dup2(stderr_w, STDERR_FILENO);
    int flags = fcntl(status_w, F_GETFD);
    fcntl(status_w, F_SETFD, flags & ~FD_CLOEXEC);
    for (const auto &kv : spec.env)
        setenv(kv.first.c_str(), kv.second.c_str(), 1);
    setenv("XMEM_STATUS_FD", std::to_string(status_w).c_str(), 1);
    std::vector<char *> argv;
    for (const auto &a : spec.argv)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    dprintf(status_w, "fail xmem: %s: %s (is it installed? see --python)\n", argv[0],
            std::strerror(errno));
    _exit(127);
}

void append_tail(std::string *tail, const char *data, size_t n)
{
    tail->append(data, n);
    if (tail->size() > 2 * k_tail_bytes)
        tail->erase(0, tail->size() - k_tail_bytes);
}

// A line that gives up ("fail TEXT", "environment TEXT", "unsupported TEXT";
// contract/profile_status.h): its TEXT and the exit status it names go into RESULT.
bool give_up(const std::string &line, ChildResult *result)
{
#define XMEM_GIVE_UP_(name, word, exit, text)                                                      \
    if ((exit) >= 0 && line.rfind(word " ", 0) == 0) {                                             \
        result->message = line.substr(sizeof word);                                                \
        result->give_up_exit = (exit);                                                             \
        return true;                                                                               \
    }
    XMEM_PROFILE_STATUS_LINES(XMEM_GIVE_UP_)
#undef XMEM_GIVE_UP_
    return false;
}

// A line saying the job met a limit its caller set ("memory-limit TEXT", "process-limit
// TEXT"): the job fails its own way, and the launcher's exit says which limit it was.
bool met_limit(const std::string &line, ChildResult *result)
{
#define XMEM_LIMIT_(name, word, exit, text)                                                        \
    if (line.rfind(word " ", 0) == 0) {                                                            \
        result->limit_exit = (exit);                                                               \
        return true;                                                                               \
    }
    XMEM_PROFILE_LIMIT_LINES(XMEM_LIMIT_)
#undef XMEM_LIMIT_
    return false;
}

// Parses complete lines of the status pipe into RESULT.
void parse_status(std::string *pending, ChildResult *result, bool *done)
{
    size_t nl;
    while ((nl = pending->find('\n')) != std::string::npos) {
        std::string line = pending->substr(0, nl);
        pending->erase(0, nl + 1);
        if (line.rfind("step ", 0) == 0) {
            result->steps = std::atoi(line.c_str() + 5);
        } else if (line == "done") {
            *done = true;
        } else if (give_up(line, result) || met_limit(line, result)) {
            // typed: read into RESULT
        } else if (line.rfind("build ", 0) == 0) {
            result->building = true;
            std::fprintf(stderr, "%s\n", line.c_str() + 6);
        } else if (line == "built") {
            result->building = false;
        }
    }
}

void stop_group(pid_t pid, int *wstatus)
{
    kill(-pid, SIGTERM);
    for (int waited = 0; waited < k_term_grace_ms; waited += 50) {
        if (waitpid(pid, wstatus, WNOHANG) == pid)
            return;
        usleep(50 * 1000);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, wstatus, 0);
}

} // namespace

std::string tail_lines(const std::string &text, int n_lines, const char *indent)
{
    size_t end = text.size();
    while (end > 0 && text[end - 1] == '\n')
        --end;
    size_t start = end;
    for (int lines = 0; start > 0; --start) {
        if (text[start - 1] == '\n' && ++lines == n_lines)
            break;
    }
    std::string out;
    for (size_t pos = start; pos < end;) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string::npos || nl > end)
            nl = end;
        out += indent + text.substr(pos, nl - pos) + "\n";
        pos = nl + 1;
    }
    return out;
}

namespace
{

// Reads what is available on FD into the status parser or the stderr tail; false at EOF.
bool read_stream(int fd, bool is_status, const ChildSpec &spec, std::string *pending,
                 ChildResult *result, bool *done)
{
    char buf[8192];
    ssize_t got;
    do {
        got = read(fd, buf, sizeof buf);
    } while (got < 0 && errno == EINTR);
    if (got <= 0)
        return false;
    if (is_status) {
        pending->append(buf, static_cast<size_t>(got));
        parse_status(pending, result, done);
    } else {
        append_tail(&result->stderr_tail, buf, static_cast<size_t>(got));
        if (spec.verbose)
            (void)!write(STDERR_FILENO, buf, static_cast<size_t>(got));
    }
    return true;
}

void classify_exit(int wstatus, bool done, ChildResult *result)
{
    if (WIFSIGNALED(wstatus)) {
        result->outcome = ChildEnd::failed;
        result->signal = WTERMSIG(wstatus);
        return;
    }
    result->exit_code = WEXITSTATUS(wstatus);
    if (!result->message.empty())
        result->outcome = ChildEnd::shim_failed;
    else if (result->exit_code != 0)
        result->outcome = ChildEnd::failed;
    else
        result->outcome = done ? ChildEnd::done : ChildEnd::exited;
}

// The clocks the launcher waits on (docs/capture.md, "Timeouts"). Before the first step only
// the whole run's budget applies: set-up, a checkpoint load, an evaluation pass or a data
// warm-up may take long. From the first step on, the next one is also due within
// max(timeout_s, k_step_timeout_factor x the first step's time, start to step 1 less a
// build): a machine slow enough that one step takes minutes is slow for every step, and
// the budget still bounds the whole. A first-use library build stops both clocks (it has its
// own limit, k_build_limit_s); once the script has exited, only a short drain of the pipes
// remains.
class Watch
{
  public:
    Watch(Clock::time_point start, const ChildSpec &spec)
        : m_timeout(std::chrono::seconds(spec.timeout_s)), m_start(start),
          m_budget(start + std::chrono::seconds(spec.budget_s))
    {
    }

    Clock::time_point next() const
    {
        if (reaped)
            return m_drain;
        if (building)
            return m_build_start + std::chrono::seconds(k_build_limit_s);
        return std::min(m_step, m_budget);
    }
    bool on_budget() const { return !reaped && !building && m_budget <= m_step; }

    void stepped()
    {
        Clock::time_point now = Clock::now();
        if (m_step == Clock::time_point::max())
            m_timeout = std::max(m_timeout, k_step_timeout_factor * (now - m_start - m_built));
        m_step = now + m_timeout;
    }
    // The wait for each step after the first (stepped).
    int timeout_s() const
    {
        return static_cast<int>(
            std::chrono::duration_cast<std::chrono::seconds>(m_timeout).count());
    }
    void build(bool started)
    {
        building = started;
        Clock::time_point now = Clock::now();
        if (started) {
            m_build_start = now;
            return;
        }
        m_built += now - m_build_start;
        m_budget += now - m_build_start;
        if (m_step != Clock::time_point::max())
            m_step += now - m_build_start;
    }
    void exited()
    {
        reaped = true;
        m_drain = Clock::now() + std::chrono::milliseconds(k_drain_ms);
    }

    bool building = false;
    bool reaped = false;

  private:
    Clock::duration m_timeout;
    Clock::time_point m_start;
    Clock::duration m_built{}; // time spent building the capture library
    Clock::time_point m_budget;
    Clock::time_point m_step = Clock::time_point::max();
    Clock::time_point m_build_start{};
    Clock::time_point m_drain{};
};

} // namespace

ChildResult run_child(const ChildSpec &spec)
{
    ChildResult result;
    int status_pipe[2], stderr_pipe[2];
    if (pipe2(status_pipe, O_CLOEXEC) != 0 || pipe2(stderr_pipe, O_CLOEXEC) != 0) {
        result.message = std::string("xmem: pipe: ") + std::strerror(errno);
        return result;
    }
    struct sigaction sa {
    };
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);

    Clock::time_point start = Clock::now();
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        result.message = std::string("xmem: fork: ") + std::strerror(err);
        if (err == EAGAIN) // the process limit its caller set (contract/profile_status.h)
            result.limit_exit = XMEM_PROFILE_EXIT_NO_PROCESSES;
        return result;
    }
    if (pid == 0)
        exec_child(spec, status_pipe[1], stderr_pipe[1]);
    setpgid(pid, pid); // also in the parent, so kill(-pid) works whoever runs first
    close(status_pipe[1]);
    close(stderr_pipe[1]);

    struct pollfd fds[2] = {{status_pipe[0], POLLIN, 0}, {stderr_pipe[0], POLLIN, 0}};
    std::string pending;
    bool done = false, timed_out = false, out_of_memory = false;
    int open_fds = 2, last_steps = 0, wstatus = 0;
    Watch watch(start, spec);
    Clock::time_point next_rss = start;
    while (open_fds > 0 && !g_interrupted) {
        auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(watch.next() - Clock::now())
                .count();
        if (left <= 0) {
            timed_out = !watch.reaped;
            result.budget_spent = timed_out && watch.on_budget();
            result.step_timeout_s = watch.timeout_s();
            break;
        }
        int n = poll(fds, 2, static_cast<int>(std::min<long long>(left, 200)));
        if (n < 0 && errno != EINTR)
            break;
        for (int i = 0; n > 0 && i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (!read_stream(fds[i].fd, i == 0, spec, &pending, &result, &done)) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
        if (result.steps != last_steps && !watch.reaped) {
            last_steps = result.steps;
            watch.stepped();
            if (spec.progress)
                std::fprintf(stderr, "xmem: %s: step %d of %d after %.1f s\n", spec.name.c_str(),
                             result.steps, spec.steps, seconds_since(start));
        }
        if (result.building != watch.building && !watch.reaped)
            watch.build(result.building);
        // Forked DataLoader workers inherit both pipes, so EOF may come late: once the script
        // itself has exited, only drain what is already in the pipes.
        if (!watch.reaped && waitpid(pid, &wstatus, WNOHANG) == pid)
            watch.exited();
        if (!watch.reaped && Clock::now() >= next_rss) {
            next_rss = Clock::now() + std::chrono::milliseconds(k_rss_poll_ms);
            result.peak_rss = std::max(result.peak_rss, group_rss_bytes(pid));
            if (spec.max_rss > 0 && result.peak_rss > spec.max_rss) {
                out_of_memory = true;
                break;
            }
        }
    }
    for (auto &f : fds)
        if (f.fd >= 0)
            close(f.fd);

    if (!watch.reaped && (timed_out || out_of_memory || g_interrupted))
        stop_group(pid, &wstatus);
    else if (!watch.reaped)
        waitpid(pid, &wstatus, 0);
    kill(-pid, SIGKILL); // DataLoader workers or other leftovers of the group
    classify_exit(wstatus, done, &result);
    if (g_interrupted)
        result.outcome = ChildEnd::interrupted;
    else if (timed_out)
        result.outcome = done ? ChildEnd::done : ChildEnd::timed_out;
    else if (out_of_memory)
        result.outcome = ChildEnd::out_of_memory;
    result.seconds = seconds_since(start);
    return result;
}

} // namespace xmem::profile
