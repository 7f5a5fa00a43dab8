// test-profile.cpp — classifying profiler runs, and the sandbox itself on small shell
// programs (limits, scrubbed environment, bounded output, exec failures).
#include "cmocka.hpp"
#include "contract/profile_status.h"
#include "verdict.h"
#include "test-list.h"

#include <csignal>
#include <unistd.h>

using namespace xmem::server;

static const char *k_json = R"({"peak_bytes": 100, "limit_bytes": 120, "fits": true,
  "gpu": "A100-40GB", "torch": "2.1", "mode": "fast", "profile_seconds": 1.5,
  "analyze_seconds": 0.25, "breakdown": {"weights": 100}, "gpu_memory_bytes": 42949672960})";

static SandboxLimits limits()
{
    return SandboxLimits{4096, 5, 256, 1, 10, 0, 64};
}

static void parses_estimate(void **)
{
    auto r = parse_estimate(k_json);
    assert_true(r.ok());
    const Estimate &e = r.value();
    assert_int_equal(e.peak_bytes, 100);
    assert_int_equal(e.limit_bytes, 120);
    assert_true(e.fits);
    assert_string_equal(e.gpu.c_str(), "A100-40GB");
    assert_int_equal(e.gpu_memory_bytes, 42949672960ULL);
    assert_string_equal(e.breakdown_json.c_str(), "{\"weights\":100}");
    auto missing = parse_estimate(R"({"peak_bytes": 1})");
    assert_false(missing.ok());
    assert_contains(missing.error().message, "limit_bytes");
    assert_false(parse_estimate(R"({"peak_bytes": -1, "limit_bytes": 1})").ok());
    assert_false(parse_estimate("not json").ok());
}

// Issue 15: what a profile prints is bounded before it is parsed, and its gpu is a name.
static void refuses_hostile_estimate(void **)
{
    std::string deep(k_json);
    std::string nest = std::string(100000, '[') + std::string(100000, ']');
    deep.replace(deep.find("{\"weights\": 100}"), 16, nest);
    auto r = parse_estimate(deep);
    assert_false(r.ok());
    assert_contains(r.error().message, "nested deeper");
    std::string bad_gpu(k_json);
    bad_gpu.replace(bad_gpu.find("A100-40GB"), 9, "A100 uid=0 limit=1");
    assert_false(parse_estimate(bad_gpu).ok());
    assert_true(gpu_name_valid("NVIDIA H100 80GB HBM3"));
    assert_true(gpu_name_valid("A100-SXM4-40GB"));
    assert_false(gpu_name_valid(""));
    assert_false(gpu_name_valid(" A100"));
    assert_false(gpu_name_valid("A100\nuid=0"));
    assert_false(gpu_name_valid("A100\"x"));
    assert_true(parse_estimate(k_json).value().breakdown != nullptr);
}

static void classifies(void **)
{
    SandboxLimits l = limits();
    SandboxRun r;
    r.spawned = true;
    r.exit_status = 0;
    r.out = k_json;
    assert_int_equal((int)profile_verdict(r, l).outcome, (int)Outcome::estimated);
    r.out = std::string(k_json).replace(std::string(k_json).find("true"), 4, "false");
    assert_int_equal((int)profile_verdict(r, l).outcome, (int)Outcome::exceeds_gpu);
    r.out = "garbage";
    assert_int_equal((int)profile_verdict(r, l).outcome, (int)Outcome::profile_bad_output);
    SandboxRun f;
    f.spawned = true;
    f.wall_expired = true;
    assert_int_equal((int)profile_verdict(f, l).outcome, (int)Outcome::profile_timeout);
    f = SandboxRun{};
    f.spawned = true;
    f.term_signal = SIGXCPU;
    assert_int_equal((int)profile_verdict(f, l).outcome, (int)Outcome::profile_cpu_limit);
    f.term_signal = SIGXFSZ;
    assert_int_equal((int)profile_verdict(f, l).outcome, (int)Outcome::profile_file_limit);
    f.term_signal = 0;
    f.exit_status = 1;
    f.err = "Traceback...\nMemoryError\n";
    ProfileVerdict v = profile_verdict(f, l);
    assert_int_equal((int)v.outcome, (int)Outcome::profile_memory_limit);
    assert_contains(v.message, "4096 MiB address-space limit");
    assert_contains(v.message, "stderr: Traceback... MemoryError");
    f.err = "sh: fork: retry: Resource temporarily unavailable";
    assert_int_equal((int)profile_verdict(f, l).outcome, (int)Outcome::profile_process_limit);
    f.err = "boom";
    v = profile_verdict(f, l);
    assert_int_equal((int)v.outcome, (int)Outcome::profile_failed);
    assert_contains(v.message, "exit status 1 | stderr: boom");
    // The estimator's exit status names the limit (contract/profile_status.h); no stderr.
    f.err = "";
    f.exit_status = XMEM_PROFILE_EXIT_NO_MEMORY;
    assert_int_equal((int)profile_verdict(f, l).outcome, (int)Outcome::profile_memory_limit);
    f.exit_status = XMEM_PROFILE_EXIT_NO_PROCESSES;
    assert_int_equal((int)profile_verdict(f, l).outcome, (int)Outcome::profile_process_limit);
    f.exit_status = XMEM_PROFILE_EXIT_FAILED;
    assert_int_equal((int)profile_verdict(f, l).outcome, (int)Outcome::profile_failed);
    SandboxRun s;
    s.spawn_error = "cannot execute /x: No such file or directory";
    assert_int_equal((int)profile_verdict(s, l).outcome, (int)Outcome::spawn_failed);
}

static SandboxRun sh(const std::string &script, SandboxLimits l, int wall_ms = 5000)
{
    SandboxSpec spec;
    spec.user.uid = getuid();
    spec.user.gid = getgid();
    spec.user.name = "test";
    spec.user.home = "/tmp";
    spec.cwd = "/tmp";
    spec.argv = {"/bin/sh", "-c", script};
    spec.env = sandbox_environment(spec.user, {{"PYTHONPATH", "/pp"}});
    spec.limits = l;
    spec.wall_ms = wall_ms;
    return sandbox_run(spec, nullptr);
}

static void sandbox_runs_and_scrubs(void **)
{
    setenv("SECRET_TOKEN", "leak", 1);
    SandboxRun r = sh("echo \"$PYTHONPATH|$CUDA_VISIBLE_DEVICES|${SECRET_TOKEN:-none}|$HOME\"; "
                      "echo err >&2; ls /proc/self/fd | wc -l",
                      limits());
    assert_true(r.spawned);
    assert_int_equal(r.exit_status, 0);
    assert_contains(r.out, "/pp||none|/tmp\n");
    assert_contains(r.err, "err");
    // stdin, stdout, stderr and the fd ls itself opens: no daemon descriptor leaks in.
    assert_contains(r.out, "\n4\n");
}

static void sandbox_wall_limit_kills_group(void **)
{
    SandboxRun r = sh("sleep 30 & sleep 30; echo never", limits(), 300);
    assert_true(r.wall_expired);
    assert_true(r.wall_seconds < 5);
    assert_int_equal((int)profile_verdict(r, limits()).outcome, (int)Outcome::profile_timeout);
}

static void sandbox_output_bound(void **)
{
    SandboxLimits l = limits();
    l.output_kb = 4;
    SandboxRun r = sh("while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done", l);
    assert_true(r.output_overflow);
    assert_true(r.out.size() <= 4 * 1024 + 16384);
    assert_int_equal((int)profile_verdict(r, l).outcome, (int)Outcome::profile_output_too_large);
}

static void sandbox_file_limit(void **)
{
    SandboxRun r = sh("head -c 3000000 /dev/zero > /tmp/xmemd-unit-fsize.$$; rc=$?; "
                      "rm -f /tmp/xmemd-unit-fsize.$$; exit $rc",
                      limits());
    assert_int_equal((int)profile_verdict(r, limits()).outcome, (int)Outcome::profile_file_limit);
}

static void sandbox_cpu_limit(void **)
{
    SandboxLimits l = limits();
    l.cpu_seconds = 1;
    SandboxRun r = sh("while :; do :; done", l, 20000);
    assert_false(r.wall_expired);
    assert_int_equal((int)profile_verdict(r, l).outcome, (int)Outcome::profile_cpu_limit);
}

static void sandbox_exec_failure(void **)
{
    SandboxSpec spec;
    spec.user.uid = getuid();
    spec.user.gid = getgid();
    spec.cwd = "/tmp";
    spec.argv = {"/nonexistent/profiler"};
    spec.limits = limits();
    spec.wall_ms = 2000;
    SandboxRun r = sandbox_run(spec, nullptr);
    assert_false(r.spawned);
    assert_contains(r.spawn_error, "cannot execute /nonexistent/profiler: No such file");
    spec.argv = {"/bin/true"};
    spec.cwd = "/nonexistent-dir";
    r = sandbox_run(spec, nullptr);
    assert_contains(r.spawn_error, "cannot enter /nonexistent-dir");
}

int test_group_profile(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_estimate),
        cmocka_unit_test(refuses_hostile_estimate),
        cmocka_unit_test(classifies),
        cmocka_unit_test(sandbox_runs_and_scrubs),
        cmocka_unit_test(sandbox_wall_limit_kills_group),
        cmocka_unit_test(sandbox_output_bound),
        cmocka_unit_test(sandbox_file_limit),
        cmocka_unit_test(sandbox_cpu_limit),
        cmocka_unit_test(sandbox_exec_failure),
    };
    return cmocka_run_group_tests_name("profile", tests, nullptr, nullptr);
}
