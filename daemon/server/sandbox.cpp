/*
 * sandbox.cpp — fork/exec of the estimator with privileges dropped in the child.
 *
 * The keeper (forked from xmemd, still root) starts a new session, becomes a child subreaper
 * and, where xmemd can give one (sandbox_namespace.h), a new PID namespace; its child is that
 * namespace's init (root, pid 1 there), which mounts the namespace's own /proc and forks the
 * estimator. When the estimator exits, init passes its wait status to the keeper and exits, and
 * the kernel kills every process left in the namespace: setsid() escapees, double forks,
 * processes that ignore SIGTERM and SIGHUP, traced ones, whatever they did. Without a
 * namespace (xmemd not root, or a kernel that refuses) the keeper forks the estimator itself
 * and kills what it finds: a subreaper inherits every orphan of its descendants.
 *
 * The keeper ends the profile when the estimator exits, when xmemd sends SIGTERM (a limit, a
 * cancel), or when xmemd dies (the keeper's death signal is that SIGTERM, so even kill -9
 * xmemd reaches it): it kills its child (init, or the estimator) and every descendant it can
 * see, reaps them for a bounded time and exits with the estimator's status. The user's code
 * cannot signal the keeper or init (both are root), so it cannot escape the clean-up.
 *
 * All of them run only async-signal-safe calls between fork() and execve() (the daemon is
 * multithreaded): everything they need (argv, envp, group list) is prepared before fork().
 * Order in the estimator: own process group → stdio → close fds → rlimits → nice →
 * setgroups/setresgid/setresuid (root last) → pdeathsig → no_new_privs → chdir → execve.
 * The namespaces are made before it, while still root: user code never runs as root. The
 * death signal comes after the uid change because the kernel clears it on any credential
 * change: set earlier, the profile outlived a keeper killed with xmemd. A failure at any step
 * is reported through a CLOEXEC pipe as (step, errno), then _exit(127).
 */
#include "sandbox.h"
#include "defaults.h"
#include "sandbox_namespace.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace xmem::server
{

namespace
{

enum ChildStep : int {
    step_session = 1,
    step_stdio,
    step_rlimit,
    step_groups,
    step_gid,
    step_uid,
    step_privs,
    step_chdir,
    step_exec,
    step_keeper,
    step_namespace
};
const char *step_name(int s)
{
    static const char *const names[] = {"?",         "setsid", "stdio",         "setrlimit",
                                        "setgroups", "setgid", "setuid",        "no_new_privs",
                                        "chdir",     "exec",   "fork (keeper)", "PID namespace"};
    return s >= 0 && s <= step_namespace ? names[s] : "?";
}

double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

[[noreturn]] void child_fail(int errfd, int step)
{
    int msg[2] = {step, errno};
    ssize_t n = write(errfd, msg, sizeof(msg));
    (void)n;
    _exit(127);
}

struct ChildPlan {
    char *const *argv;
    char *const *envp;
    const char *cwd;
    const gid_t *groups;
    std::size_t ngroups;
    uid_t uid;
    gid_t gid;
    const SandboxLimits *lim;
    int devnull, out_w, err_w, errpipe_w;
    pid_t daemon;       // xmemd, the keeper's parent
    bool pid_namespace; // the profile runs in a PID namespace of its own
};

void set_limit(int res, rlim_t soft, rlim_t hard, int errfd)
{
    struct rlimit r = {soft, hard};
    if (setrlimit(res, &r) != 0)
        child_fail(errfd, step_rlimit);
}

[[noreturn]] void child_main(const ChildPlan &p, const sigset_t &old_mask)
{
    int e = p.errpipe_w;
    pid_t keeper = getppid();
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    if (setpgid(0, 0) < 0)
        child_fail(e, step_session);
    if (dup2(p.devnull, 0) < 0 || dup2(p.out_w, 1) < 0 || dup2(p.err_w, 2) < 0)
        child_fail(e, step_stdio);
    // Keep only stdio and the error pipe (moved to fd 3) so no daemon fd leaks into user code.
    if (dup2(e, 3) < 0)
        child_fail(e, step_stdio);
    e = 3;
    fcntl(e, F_SETFD, FD_CLOEXEC);
    syscall(SYS_close_range, 4u, ~0u, 0u);
    const SandboxLimits &l = *p.lim;
    set_limit(RLIMIT_AS, (rlim_t)l.address_space_mb << 20, (rlim_t)l.address_space_mb << 20, e);
    // Soft CPU limit sends SIGXCPU; the hard one, a little later, SIGKILL.
    set_limit(RLIMIT_CPU, (rlim_t)l.cpu_seconds, (rlim_t)l.cpu_seconds + 2, e);
    set_limit(RLIMIT_NPROC, (rlim_t)l.processes, (rlim_t)l.processes, e);
    set_limit(RLIMIT_FSIZE, (rlim_t)l.file_size_mb << 20, (rlim_t)l.file_size_mb << 20, e);
    set_limit(RLIMIT_CORE, 0, 0, e);
    setpriority(PRIO_PROCESS, 0, l.nice);
    signal(SIGPIPE, SIG_DFL);
    if (getuid() == 0) {
        if (setgroups(p.ngroups, p.groups) != 0)
            child_fail(e, step_groups);
        if (setresgid(p.gid, p.gid, p.gid) != 0)
            child_fail(e, step_gid);
        if (setresuid(p.uid, p.uid, p.uid) != 0)
            child_fail(e, step_uid);
        if (p.uid != 0 && setuid(0) == 0) { // privileges must be gone for good
            errno = EPERM;
            child_fail(e, step_uid);
        }
    }
    // The keeper's death kills the profile; a keeper already gone is caught by its pid.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != keeper)
        child_fail(e, step_privs);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        child_fail(e, step_privs);
    if (chdir(p.cwd) != 0)
        child_fail(e, step_chdir);
    execve(p.argv[0], p.argv, p.envp);
    child_fail(e, step_exec);
}

// ---- the keeper (async-signal-safe only: it is a child of a multithreaded process)

// Child pids of the calling (single-threaded) process: /proc/thread-self is its task.
int list_children(pid_t *out, int max)
{
    char buf[4096];
    int fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    int count = 0;
    pid_t cur = 0;
    for (ssize_t i = 0; i < n && count < max; i++) {
        if (buf[i] >= '0' && buf[i] <= '9') {
            cur = cur * 10 + (buf[i] - '0');
        } else if (cur > 0) {
            out[count++] = cur;
            cur = 0;
        }
    }
    return count;
}

// Kills every descendant: the killed children's own children are re-parented to us (we are
// a subreaper) before we reap their parent, so the next round sees them. RLIMIT_NPROC bounds
// the rounds of a fork loop. In a namespace the only child is init, whose death kills the
// rest. Every wait is bounded (k_keeper_reap_ms): a descendant traced by a process outside
// the sandbox dies of SIGKILL but stays unreapable for as long as its tracer does not wait
// for it — and the namespace's init, which the kernel makes wait for every process of the
// namespace, with it — and once pinned the profiling slot and a pool thread for that long
// (issue 26, M2). Past the deadline the keeper leaves such zombies to init. Returns whether
// `child` was reaped, with its wait status.
bool keeper_kill_all(pid_t child, int *child_status)
{
    pid_t kids[512];
    bool reaped = false;
    double give_up = now_s() + k_keeper_reap_ms / 1000.0;
    for (;;) {
        int n = list_children(kids, 512);
        for (int i = 0; i < n; i++) {
            kill(-kids[i], SIGKILL); // its process group, if it leads one
            kill(kids[i], SIGKILL);
        }
        int st = 0;
        pid_t r = waitpid(-1, &st, WNOHANG);
        if (r == child) {
            *child_status = st;
            reaped = true;
        }
        if (r < 0 && errno == ECHILD)
            return reaped;
        if (r == 0) { // a killed child needs a moment to die; a traced one may never be reaped
            if (now_s() > give_up)
                return reaped;
            struct timespec pause = {0, 5 * 1000 * 1000};
            nanosleep(&pause, nullptr);
        }
    }
}

// Exits the way the estimator ended, so xmemd's wait4() sees its status.
[[noreturn]] void keeper_mirror(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, nullptr);
        kill(getpid(), sig);
        _exit(128 + sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

// Closes every descriptor but `keep_a` and `keep_b` (either may be -1).
void close_all_but(int keep_a, int keep_b)
{
    int lo = std::min(keep_a, keep_b), hi = std::max(keep_a, keep_b);
    unsigned from = 0;
    for (int keep : {lo, hi}) {
        if (keep < 0)
            continue;
        if ((unsigned)keep > from)
            syscall(SYS_close_range, from, (unsigned)keep - 1, 0u);
        from = (unsigned)keep + 1;
    }
    syscall(SYS_close_range, from, ~0u, 0u);
}

// The namespace's init (pid 1 there, still root): mounts the namespace's /proc, forks the
// estimator, reaps whatever is re-parented to it, and when the estimator ends writes its wait
// status to the keeper and exits, upon which the kernel kills everything left in the
// namespace. The status travels by pipe because init's own exit waits for the namespace to
// empty, which a traced zombie can hold up: the keeper must not wait for that.
[[noreturn]] void namespace_init_main(const ChildPlan &p, const sigset_t &old_mask, int status_r,
                                      int status_w)
{
    close(status_r);
    // The keeper's death kills init and so the namespace. A keeper already gone has closed
    // the status pipe's only read end, which poll() reports as POLLERR on the write end.
    struct pollfd keeper = {status_w, 0, 0};
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || poll(&keeper, 1, 0) != 0)
        child_fail(p.errpipe_w, step_keeper);
    int err = namespace_enter_mounts();
    if (err != 0) {
        errno = err;
        child_fail(p.errpipe_w, step_namespace);
    }
    pid_t profiler = fork();
    if (profiler == 0)
        child_main(p, old_mask);
    if (profiler < 0)
        child_fail(p.errpipe_w, step_keeper);
    close_all_but(status_w, -1); // the pipes' EOFs must follow the estimator alone
    for (;;) {
        int st = 0;
        pid_t r = waitpid(-1, &st, 0);
        if (r == profiler) {
            ssize_t n = write(status_w, &st, sizeof(st));
            _exit(n == (ssize_t)sizeof(st) ? 0 : 127);
        }
        if (r < 0 && errno != EINTR)
            _exit(127);
    }
}

// The estimator's wait status as init wrote it; false when init ended without writing it.
bool read_profiler_status(int status_r, int *status)
{
    int st = 0;
    ssize_t n;
    while ((n = read(status_r, &st, sizeof(st))) < 0 && errno == EINTR) {
    }
    if (n != (ssize_t)sizeof(st))
        return false;
    *status = st;
    return true;
}

// Waits until the estimator ended (its status: from init's pipe, or from reaping it) or
// SIGTERM came (false). `sigfd` reads SIGCHLD and SIGTERM; `status_r` is -1 without a
// namespace.
bool keeper_wait(int sigfd, int status_r, pid_t child, int *status)
{
    for (;;) {
        struct pollfd fds[2] = {{sigfd, POLLIN, 0}, {status_r, POLLIN, 0}};
        if (poll(fds, 2, -1) < 0)
            continue;
        if (fds[1].revents) {
            if (read_profiler_status(status_r, status))
                return true;
            close(status_r); // init ended without a word: its reaping below says how
            status_r = -1;
        }
        struct signalfd_siginfo si[8];
        ssize_t n = fds[0].revents ? read(sigfd, si, sizeof(si)) : 0;
        for (ssize_t i = 0; i < n / (ssize_t)sizeof(si[0]); i++)
            if (si[i].ssi_signo == SIGTERM)
                return false;
        int st = 0;
        pid_t r;
        while ((r = waitpid(-1, &st, WNOHANG)) > 0)
            if (r == child) {
                if (status_r < 0 || !read_profiler_status(status_r, status))
                    *status = st;
                return true;
            }
    }
}

[[noreturn]] void keeper_main(const ChildPlan &p)
{
    if (setsid() < 0)
        child_fail(p.errpipe_w, step_session);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    struct rlimit no_core = {0, 0}; // it re-raises the estimator's signal: SIGXCPU would dump
    setrlimit(RLIMIT_CORE, &no_core);
    sigset_t wait_set, old_mask;
    sigemptyset(&wait_set);
    sigaddset(&wait_set, SIGCHLD);
    sigaddset(&wait_set, SIGTERM);
    sigprocmask(SIG_BLOCK, &wait_set, &old_mask);
    // xmemd's death, even by SIGKILL, reaches the keeper as the SIGTERM it waits for, so it
    // still kills every descendant, orphans of setsid() included, before it goes. A death
    // signal of SIGKILL killed the keeper first and left those orphans to init (issue 26, L3).
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != p.daemon)
        child_fail(p.errpipe_w, step_keeper); // xmemd is already gone: start nothing
    int sigfd = signalfd(-1, &wait_set, SFD_CLOEXEC);
    if (sigfd < 0)
        child_fail(p.errpipe_w, step_keeper);
    int status_pipe[2] = {-1, -1};
    if (p.pid_namespace && (unshare(CLONE_NEWPID) != 0 || pipe2(status_pipe, O_CLOEXEC) != 0))
        child_fail(p.errpipe_w, step_namespace);
    pid_t child = fork();
    if (child == 0 && p.pid_namespace)
        namespace_init_main(p, old_mask, status_pipe[0], status_pipe[1]);
    if (child == 0)
        child_main(p, old_mask);
    if (child < 0)
        child_fail(p.errpipe_w, step_keeper);
    close_all_but(sigfd, status_pipe[0]); // the pipes' EOFs must follow the estimator alone
    int status = 0;
    bool ended = keeper_wait(sigfd, status_pipe[0], child, &status);
    int child_status = 0;
    if (keeper_kill_all(child, &child_status) && !ended) { // SIGTERM as the estimator ended
        ended = true;
        if (status_pipe[0] < 0 || !read_profiler_status(status_pipe[0], &status))
            status = child_status;
    }
    keeper_mirror(ended ? status : SIGKILL); // a wait status of SIGKILL: "killed by SIGKILL"
}

std::vector<char *> cstrings(const std::vector<std::string> &v)
{
    std::vector<char *> out;
    for (const auto &s : v)
        out.push_back(const_cast<char *>(s.c_str()));
    out.push_back(nullptr);
    return out;
}

// How far a kept tail may grow past its bound before it is cut back to it: one move of the
// tail per this many bytes read, not one per read. Cut at every read, 4 GB of a preamble's
// stderr cost xmemd 2.6 s of CPU in moves alone (issue 26, L8).
constexpr std::size_t k_tail_slack = 1 << 20;

// Appends to a bounded buffer; for stderr keep the tail (at most cap + k_tail_slack bytes
// until keep_tail_cut), for stdout report overflow.
bool drain(int fd, std::string &buf, std::size_t cap, bool keep_tail, bool &eof)
{
    char chunk[16384];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n > 0) {
            buf.append(chunk, (std::size_t)n);
            if (buf.size() > cap) {
                if (!keep_tail)
                    return false;
                if (buf.size() > cap + k_tail_slack)
                    buf.erase(0, buf.size() - cap);
            }
            continue;
        }
        if (n == 0)
            eof = true;
        else if (errno == EINTR)
            continue;
        return true; // EAGAIN or error: wait for more
    }
}

// The last `cap` bytes of a tail drain() kept.
void keep_tail_cut(std::string &buf, std::size_t cap)
{
    if (buf.size() > cap)
        buf.erase(0, buf.size() - cap);
}

} // namespace

std::vector<std::string>
sandbox_environment(const UserIdentity &u,
                    const std::vector<std::pair<std::string, std::string>> &allowed)
{
    std::vector<std::string> env;
    bool have_path = false;
    for (const auto &[k, v] : allowed) {
        env.push_back(k + "=" + v);
        have_path |= (k == "PATH");
    }
    if (!have_path)
        env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
    env.push_back("HOME=" + u.home);
    env.push_back("USER=" + u.name);
    env.push_back("LOGNAME=" + u.name);
    env.push_back("SHELL=" + u.shell);
    env.push_back("LANG=C.UTF-8");
    for (const auto &kv : sandbox_forced_variables())
        env.push_back(kv);
    return env;
}

const std::vector<std::string> &sandbox_forced_variables()
{
    // No GPU may be used while profiling on a login node, whatever the stack.
    static const std::vector<std::string> forced = {
        "CUDA_VISIBLE_DEVICES=", "HIP_VISIBLE_DEVICES=", "ROCR_VISIBLE_DEVICES=",
        "NVIDIA_VISIBLE_DEVICES=void", "XMEM_PROFILING=1"};
    return forced;
}

SandboxRun sandbox_run(const SandboxSpec &spec, const std::atomic<bool> *cancel)
{
    SandboxRun run;
    int outp[2] = {-1, -1}, errp[2] = {-1, -1}, failp[2] = {-1, -1};
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0 || pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
        pipe2(failp, O_CLOEXEC) != 0) {
        run.spawn_error = std::string("cannot create pipes: ") + strerror(errno);
        for (int fd : {devnull, outp[0], outp[1], errp[0], errp[1], failp[0], failp[1]})
            if (fd >= 0)
                close(fd);
        return run;
    }
    auto argv = cstrings(spec.argv);
    auto envp = cstrings(spec.env);
    ChildPlan plan{argv.data(),
                   envp.data(),
                   spec.cwd.c_str(),
                   spec.user.groups.data(),
                   spec.user.groups.size(),
                   spec.user.uid,
                   spec.user.gid,
                   &spec.limits,
                   devnull,
                   outp[1],
                   errp[1],
                   failp[1],
                   getpid(),
                   sandbox_isolation().pid_namespace};
    double start = now_s();
    pid_t pid = fork();
    if (pid == 0)
        keeper_main(plan);
    close(devnull);
    close(outp[1]);
    close(errp[1]);
    close(failp[1]);
    if (pid < 0) {
        run.spawn_error = std::string("fork failed: ") + strerror(errno);
        for (int fd : {outp[0], errp[0], failp[0]})
            close(fd);
        return run;
    }
    // The failure pipe closes on a successful execve (CLOEXEC) or carries (step, errno).
    int msg[2];
    ssize_t n;
    while ((n = read(failp[0], msg, sizeof(msg))) < 0 && errno == EINTR) {
    }
    close(failp[0]);
    if (n == (ssize_t)sizeof(msg)) {
        run.spawn_error = std::string(step_name(msg[0])) + " failed: " + strerror(msg[1]);
        if (msg[0] == step_exec)
            run.spawn_error = "cannot execute " + spec.argv[0] + ": " + strerror(msg[1]);
        else if (msg[0] == step_chdir)
            run.spawn_error = "cannot enter " + spec.cwd + ": " + strerror(msg[1]);
        waitpid(pid, nullptr, 0);
        close(outp[0]);
        close(errp[0]);
        return run;
    }
    run.spawned = true;
    fcntl(outp[0], F_SETFL, O_NONBLOCK);
    fcntl(errp[0], F_SETFL, O_NONBLOCK);
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    std::size_t cap = (std::size_t)spec.limits.output_kb * 1024;
    bool out_eof = false, err_eof = false, exited = false;
    double deadline = start + spec.wall_ms / 1000.0;
    while (!exited || !out_eof || !err_eof) {
        double left = deadline - now_s();
        if (left <= 0) {
            run.wall_expired = true;
            break;
        }
        if (cancel && cancel->load()) {
            run.cancelled = true;
            break;
        }
        struct pollfd fds[3] = {{out_eof ? -1 : outp[0], POLLIN, 0},
                                {err_eof ? -1 : errp[0], POLLIN, 0},
                                {exited ? -1 : pidfd, POLLIN, 0}};
        int wait_ms = (int)std::min(left * 1000.0 + 1, 200.0); // wake to check cancel
        if (exited)
            wait_ms = std::min(wait_ms, 50); // grandchildren may hold the pipes: don't wait long
        int r = poll(fds, 3, wait_ms);
        if (r < 0 && errno != EINTR)
            break;
        if (fds[0].revents && !drain(outp[0], run.out, cap, false, out_eof)) {
            run.output_overflow = true;
            break;
        }
        if (fds[1].revents)
            drain(errp[0], run.err, cap, true, err_eof);
        if (!exited && (pidfd < 0 || fds[2].revents)) {
            siginfo_t si{};
            exited =
                waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
        }
        if (exited && r == 0)
            break; // the estimator is gone; leftover descendants are killed below
    }
    // The keeper kills and reaps whatever remains (an estimator past a limit, its descendants,
    // wherever they moved), then exits; it has finished already when the estimator exited. Its
    // own reaping is bounded; should it still not end, it is killed (it is xmemd's child and
    // root's: the user cannot stop that), so this wait is bounded too.
    kill(pid, SIGTERM);
    if (pidfd >= 0) {
        struct pollfd keeper = {pidfd, POLLIN, 0};
        int waited;
        while ((waited = poll(&keeper, 1, k_keeper_reap_ms + k_keeper_exit_grace_ms)) < 0 &&
               errno == EINTR) {
        }
        if (waited == 0)
            kill(pid, SIGKILL);
    }
    int status = 0;
    struct rusage ru {
    };
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status))
        run.exit_status = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        run.term_signal = WTERMSIG(status);
    run.cpu_seconds =
        ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    keep_tail_cut(run.err, cap);
    run.wall_seconds = now_s() - start;
    if (pidfd >= 0)
        close(pidfd);
    close(outp[0]);
    close(errp[0]);
    return run;
}

} // namespace xmem::server
