// test_sandbox.cpp — the profile sandbox run for real as the calling user: what it captures
// and reports, the environment it builds, which isolation it picks, and that its waits are
// bounded and nothing a profile starts outlives it (issue 26, M2 and L3). The limits are
// test_profile.cpp's.
#include "cmocka.hpp"
#include "defaults.h"
#include "sandbox.h"
#include "sandbox_namespace.h"
#include "test-list.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <dirent.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace xmem::server;

static SandboxSpec spec_for(const std::string &program, int wall_ms = 10000)
{
    SandboxSpec spec;
    spec.user.uid = getuid();
    spec.user.gid = getgid();
    spec.user.name = "test";
    spec.user.home = "/tmp";
    spec.user.shell = "/bin/sh";
    spec.cwd = "/tmp";
    spec.argv = {"/bin/sh", "-c", program};
    spec.env = sandbox_environment(spec.user, {{"PATH", "/usr/bin:/bin"}});
    spec.limits = SandboxLimits{4096, 30, 256, 8, 30, 0, 64};
    spec.wall_ms = wall_ms;
    return spec;
}

// A sleep no other process runs: its argument names this test process.
static std::string marker_sleep()
{
    return "sleep 300." + std::to_string(getpid());
}

// Pids of the processes (zombies aside) whose command line is `marker_sleep()`.
static std::vector<pid_t> marked_processes()
{
    std::string want = marker_sleep();
    std::replace(want.begin(), want.end(), ' ', '\0');
    std::vector<pid_t> found;
    DIR *d = opendir("/proc");
    while (struct dirent *e = d ? readdir(d) : nullptr) {
        pid_t pid = (pid_t)atoi(e->d_name);
        std::ifstream cmd("/proc/" + std::string(e->d_name) + "/cmdline");
        std::string text((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
        if (pid > 0 && text.compare(0, want.size(), want) == 0)
            found.push_back(pid);
    }
    if (d)
        closedir(d);
    return found;
}

static bool none_marked_within(int ms)
{
    for (int waited = 0; waited < ms; waited += 50) {
        if (marked_processes().empty())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return marked_processes().empty();
}

static void choice_of_isolation(void **)
{
    auto user = sandbox_isolation_choice(false, 0);
    assert_false(user.pid_namespace);
    assert_string_equal(user.why_not.c_str(), "xmemd is not root");
    auto refused = sandbox_isolation_choice(true, EPERM);
    assert_false(refused.pid_namespace);
    assert_contains(refused.why_not, "refused");
    assert_contains(refused.why_not, strerror(EPERM));
    auto root = sandbox_isolation_choice(true, 0);
    assert_true(root.pid_namespace);
    assert_true(root.why_not.empty());
    // This process's own choice: root gets a namespace wherever the kernel allows one.
    if (geteuid() != 0)
        assert_false(sandbox_isolation().pid_namespace);
}

static void environment_hides_the_gpu(void **)
{
    UserIdentity u;
    u.name = "alice";
    u.home = "/home/alice";
    u.shell = "/bin/bash";
    auto env = sandbox_environment(u, {{"HF_HOME", "/scratch/hf"}});
    auto has = [&](const std::string &kv) {
        return std::find(env.begin(), env.end(), kv) != env.end();
    };
    assert_true(has("HF_HOME=/scratch/hf"));
    assert_true(has("PATH=/usr/local/bin:/usr/bin:/bin")); // none given: a default
    assert_true(has("HOME=/home/alice") && has("USER=alice") && has("LOGNAME=alice"));
    assert_true(has("SHELL=/bin/bash") && has("LANG=C.UTF-8"));
    for (const auto &kv : sandbox_forced_variables())
        assert_true(has(kv));
    assert_true(has("CUDA_VISIBLE_DEVICES=") && has("XMEM_PROFILING=1"));
    auto with_path = sandbox_environment(u, {{"PATH", "/opt/venv/bin:/usr/bin"}});
    assert_int_equal(std::count_if(with_path.begin(), with_path.end(),
                                   [](const std::string &kv) { return kv.rfind("PATH=", 0) == 0; }),
                     1);
}

// Stderr keeps its last output_kb KiB, however much more was written (3 MiB here, past the
// slack drain() lets the tail grow by).
static void stderr_keeps_its_tail(void **)
{
    auto r = sandbox_run(spec_for("head -c 3145728 /dev/zero >&2; echo last words >&2"), nullptr);
    assert_int_equal(r.exit_status, 0);
    assert_int_equal(r.err.size(), 64 * 1024);
    assert_true(r.err.size() >= 11 && r.err.compare(r.err.size() - 11, 11, "last words\n") == 0);
    assert_int_equal(r.err[0], '\0');
}

// (test_profile.cpp has the limits, the scrubbed environment and exec failures.)
static void captures_and_reports(void **)
{
    auto r = sandbox_run(spec_for("echo out; echo err >&2; exit 3"), nullptr);
    assert_true(r.spawned);
    assert_int_equal(r.exit_status, 3);
    assert_string_equal(r.out.c_str(), "out\n");
    assert_string_equal(r.err.c_str(), "err\n");
    r = sandbox_run(spec_for("kill -SEGV $$"), nullptr); // mirrored through init and keeper
    assert_int_equal(r.term_signal, SIGSEGV);
    auto nowhere = spec_for("true");
    nowhere.cwd = "/nonexistent";
    r = sandbox_run(nowhere, nullptr);
    assert_false(r.spawned);
    assert_contains(r.spawn_error, "cannot enter /nonexistent");
}

// In a namespace the profile sees its own pids: init is 1, the profiler 2, and /proc lists
// nothing of the host's.
static void namespace_pids_and_proc_agree(void **)
{
    if (!sandbox_isolation().pid_namespace)
        skip();
    auto r =
        sandbox_run(spec_for("echo $$; ls /proc | grep '^[0-9]' | sort -n | tail -1"), nullptr);
    assert_int_equal(r.exit_status, 0);
    // the profiler is 2; /proc's largest pid is one of the few its pipeline started
    std::size_t nl = r.out.find('\n');
    assert_true(nl != std::string::npos);
    assert_string_equal(r.out.substr(0, nl).c_str(), "2");
    int largest = atoi(r.out.c_str() + nl + 1);
    assert_in_range(largest, 3, 10);
}

// A descendant in a session of its own that ignores SIGTERM and SIGHUP is gone when the
// profile ends, whether it ends by itself or by its wall time.
static void nothing_outlives_the_profile(void **)
{
    std::string escape = "setsid sh -c 'trap \"\" TERM HUP; exec " + marker_sleep() +
                         "' </dev/null >/dev/null 2>&1 & sleep 0.3; ";
    auto r = sandbox_run(spec_for(escape + "echo done"), nullptr);
    assert_int_equal(r.exit_status, 0);
    assert_string_equal(r.out.c_str(), "done\n");
    assert_true(none_marked_within(2000));
    r = sandbox_run(spec_for(escape + "sleep 300", 1000), nullptr);
    assert_true(r.wall_expired);
    assert_true(none_marked_within(2000));
}

// A descendant traced from outside (here, by this process) is killed but cannot be reaped
// while its tracer does not wait for it; the sandbox still returns within its deadlines.
static void a_traced_descendant_does_not_hold_the_run(void **)
{
    SandboxRun r;
    std::thread run(
        [&] { r = sandbox_run(spec_for(marker_sleep() + " & sleep 1.5; echo done"), nullptr); });
    std::vector<pid_t> traced;
    for (int i = 0; i < 100 && traced.empty(); i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        traced = marked_processes();
    }
    bool seized = traced.size() == 1 && ptrace(PTRACE_SEIZE, traced[0], nullptr, nullptr) == 0;
    int seize_errno = errno;
    run.join();
    if (!seized && traced.size() == 1 && seize_errno == EPERM)
        skip();   // this kernel lets no process trace it (Yama ptrace_scope 2 or 3)
    if (seized) { // the tracer now reaps the tracee, and so frees the profile's init
        while (waitpid(traced[0], nullptr, __WALL) < 0 && errno == EINTR) {
        }
    }
    assert_true(seized);
    assert_int_equal(r.exit_status, 0);
    assert_string_equal(r.out.c_str(), "done\n");
    double bound = 1.5 + (k_keeper_reap_ms + k_keeper_exit_grace_ms) / 1000.0 + 1.0;
    if (r.wall_seconds > bound)
        fail_msg("the run took %.1f s with a traced descendant (bound %.1f s)", r.wall_seconds,
                 bound);
    assert_true(none_marked_within(2000));
}

int test_group_sandbox(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(choice_of_isolation),
        cmocka_unit_test(environment_hides_the_gpu),
        cmocka_unit_test(captures_and_reports),
        cmocka_unit_test(stderr_keeps_its_tail),
        cmocka_unit_test(namespace_pids_and_proc_agree),
        cmocka_unit_test(nothing_outlives_the_profile),
        cmocka_unit_test(a_traced_descendant_does_not_hold_the_run),
    };
    return cmocka_run_group_tests_name("sandbox", tests, nullptr, nullptr);
}
