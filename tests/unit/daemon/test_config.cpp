// test-config.cpp — strict YAML config: every key, every error with FILE:LINE: key.
#include "cmocka.hpp"
#include "config.h"
#include "test-list.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

using namespace xmem::server;
using xmem::Result;

static std::string write_tmp(const std::string &text)
{
    char path[] = "/tmp/xmemd-test-config-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text.data(), text.size()), (ssize_t)text.size());
    close(fd);
    return path;
}

static Result<Config> load(const std::string &text, std::string *path_out = nullptr)
{
    std::string p = write_tmp(text);
    auto r = config_load(p);
    if (path_out)
        *path_out = p;
    unlink(p.c_str());
    return r;
}

// The error must be exactly "FILE:LINE: key: ..." with the expected line and key, and what
// --check-config prints for the file (config_check) must be that problem, with its fix after
// "; " (issue 35): one line, nothing else.
static void expect_error(const std::string &text, int line, const std::string &key,
                         const std::string &what)
{
    std::string path;
    auto r = load(text, &path);
    assert_false((bool)r);
    std::string head = path + ":" + std::to_string(line) + ": " + key + ": " + what;
    assert_contains(r.error().message, head);
    std::string p = write_tmp(text);
    ConfigCheck check = config_check(p);
    unlink(p.c_str());
    assert_int_equal(check.problems.size(), 1);
    std::string problem = check.problems[0];
    problem.replace(0, p.size(), path); // the same text, written to another temporary file
    assert_string_equal(problem.c_str(), r.error().message.c_str());
    std::size_t fix = problem.find("; ", head.size() - what.size());
    assert_true(fix != std::string::npos && problem.size() > fix + 2);
}

// Issue 15: an empty (or comment-only) file is refused, so a truncated file cannot reload as
// the defaults; a file with one key still gets the defaults for the rest.
static void empty_file_is_refused(void **)
{
    expect_error("", 1, "(top level)", "the config has no keys");
    expect_error("# only a comment\n", 1, "(top level)", "the config has no keys");
    auto r = load("steps: 3\n");
    assert_true((bool)r);
    Config d = config_defaults();
    assert_string_equal(r.value().socket.c_str(), d.socket.c_str());
    assert_int_equal(r.value().max_concurrent, d.max_concurrent);
    assert_int_equal(r.value().limits.wall_seconds, d.limits.wall_seconds);
    assert_int_equal(r.value().fingerprint.size(), 64);
}

static void every_key(void **)
{
    auto r =
        load("socket: /s/x.sock\nlockfile: /s/x.lock\ndatabase: /s/x.db\n"
             "munge_socket: /m/sock\nlog: syslog\nmetrics_listen: 127.0.0.1:9999\n"
             "estimator: [/p/prof, --json, -v]\ntorch: '2.3'\nsteps: 7\n"
             "allow_root: true\nmax_concurrent: 5\nmax_per_user: 3\nqueue_size: 9\n"
             "max_connections: 77\n"
             "limits: {address_space_mb: 100, cpu_seconds: 11, processes: 12,"
             " file_size_mb: 13, wall_seconds: 14, nice: 15, output_kb: 16}\n"
             "cache: {ttl_seconds: 17, max_entries: 18}\n"
             "policy:\n  mode: mps\n  margin_percent: 20\n  whole_gpu_above_percent: 80\n"
             "  decision_ttl_seconds: 300\n"
             "  default: {gpu: H100-80GB, memory_gb: 80, shards_per_gpu: 8, mps_per_gpu: 50}\n"
             "  partitions:\n    a: {gpu: A100-40GB, memory_gb: 40}\n    b: {shards_per_gpu: 2}\n");
    assert_true((bool)r);
    const Config &c = r.value();
    assert_string_equal(c.socket.c_str(), "/s/x.sock");
    assert_string_equal(c.lockfile.c_str(), "/s/x.lock");
    assert_string_equal(c.database.c_str(), "/s/x.db");
    assert_string_equal(c.munge_socket.c_str(), "/m/sock");
    assert_string_equal(c.log.c_str(), "syslog");
    assert_string_equal(c.metrics_listen.c_str(), "127.0.0.1:9999");
    assert_int_equal(c.estimator.size(), 3);
    assert_string_equal(c.estimator[2].c_str(), "-v");
    assert_string_equal(c.torch.c_str(), "2.3");
    assert_int_equal(c.steps, 7);
    assert_true(c.allow_root);
    assert_int_equal(c.max_concurrent, 5);
    assert_int_equal(c.max_per_user, 3);
    assert_int_equal(c.queue_size, 9);
    assert_int_equal(c.max_connections, 77);
    assert_int_equal(c.limits.address_space_mb, 100);
    assert_int_equal(c.limits.cpu_seconds, 11);
    assert_int_equal(c.limits.processes, 12);
    assert_int_equal(c.limits.file_size_mb, 13);
    assert_int_equal(c.limits.wall_seconds, 14);
    assert_int_equal(c.limits.nice, 15);
    assert_int_equal(c.limits.output_kb, 16);
    assert_int_equal(c.cache_ttl_seconds, 17);
    assert_int_equal(c.cache_max_entries, 18);
    assert_string_equal(c.policy.mode.c_str(), "mps");
    assert_int_equal(c.policy.margin_percent, 20);
    assert_int_equal(c.policy.whole_gpu_above_percent, 80);
    assert_int_equal(c.policy.decision_ttl_seconds, 300);
    assert_string_equal(c.policy.default_target.gpu.c_str(), "H100-80GB");
    assert_int_equal(c.policy.default_target.mps_per_gpu, 50);
    assert_int_equal(c.policy.partitions.size(), 2);
    // Missing partition keys inherit from default.
    assert_string_equal(c.policy.partitions[0].second.gpu.c_str(), "A100-40GB");
    assert_int_equal(c.policy.partitions[0].second.shards_per_gpu, 8);
    assert_string_equal(c.policy.partitions[1].second.gpu.c_str(), "H100-80GB");
    assert_int_equal(c.policy.partitions[1].second.shards_per_gpu, 2);
    assert_string_equal(policy_target(c.policy, "a").gpu.c_str(), "A100-40GB");
    assert_string_equal(policy_target(c.policy, "zzz").gpu.c_str(), "H100-80GB");
    assert_int_equal(policy_gpu_bytes(c.policy, "A100-40GB"), 40536ULL << 20); // the catalog's
    assert_int_equal(policy_gpu_bytes(c.policy, "nope"), 0);
}

static void errors_name_file_line_key(void **)
{
    expect_error("socket: /a\nsockt: /b\n", 2, "sockt", "unknown key");
    expect_error("limits:\n  wall_seconds: 5\n  walls: 3\n", 3, "limits.walls", "unknown key");
    expect_error("steps: abc\n", 1, "steps", "invalid integer: abc");
    expect_error("steps: 1001\n", 1, "steps", "out of range: 1001; use a value from 1 to 1000");
    expect_error("\n\nmax_concurrent: 0\n", 3, "max_concurrent", "out of range: 0");
    expect_error("allow_root: maybe\n", 1, "allow_root", "invalid boolean: maybe");
    expect_error("socket: run/x.sock\n", 1, "socket", "must be an absolute path: run/x.sock");
    expect_error("database:\n", 1, "database", "missing value");
    expect_error("estimator: []\n", 1, "estimator", "expected a non-empty list");
    expect_error("estimator: [prof]\n", 1, "estimator",
                 "the first element must be an absolute path");
    expect_error("profiler: [prof]\n", 1, "profiler", "the first element must be an absolute path");
    expect_error("log: journal\n", 1, "log", "invalid value: journal; use stderr or syslog");
    expect_error("metrics_listen: nowhere\n", 1, "metrics_listen", "expected HOST:PORT");
    expect_error("metrics_listen: 127.0.0.1:99999\n", 1, "metrics_listen", "invalid port");
    expect_error("policy:\n  mode: slice\n", 2, "policy.mode", "invalid value: slice");
    expect_error("policy:\n  default: {gpu: 'A 100'}\n", 2, "policy.default.gpu",
                 "invalid character");
    expect_error("policy:\n  partitions:\n    p: {memory_gb: -1}\n", 3,
                 "policy.partitions.p.memory_gb", "out of range: -1");
    expect_error("policy:\n  partitions:\n    p: {colour: red}\n", 3, "policy.partitions.p.colour",
                 "unknown key");
    expect_error("limits: 5\n", 1, "limits", "expected a mapping of keys");
    expect_error("cache: {ttl_seconds: x}\n", 1, "cache.ttl_seconds", "invalid integer: x");
    expect_error("torch: [1]\n", 1, "torch", "expected a single value");
    expect_error("limits:\n  nice: 20\n", 2, "limits.nice", "out of range: 20");
    expect_error("steps: 2\nsocket: /a\nsteps: 3\n", 3, "steps", "given twice; keep one");
    expect_error("limits:\n  nice: 1\n  nice: 2\n", 3, "limits.nice", "given twice");
    expect_error("max_concurrent: 2\nmax_per_user: 3\n", 2, "max_per_user",
                 "3 is above max_concurrent 2");
}

// Issue 35: one key's problem does not hide the others; each is its own line, in file order,
// with its line and fix, and the first is what loading says, with how many more.
static void every_problem_is_listed(void **)
{
    std::string p = write_tmp("socket: /a\nsockt: /b\nsteps: abc\nlimits:\n  nice: 20\n"
                              "  walls: 3\npolicy:\n  mode: slice\n  partitions:\n"
                              "    p: {colour: red}\nmax_concurrent: 2\nmax_per_user: 3\n");
    ConfigCheck check = config_check(p);
    auto r = config_load(p);
    unlink(p.c_str());
    const char *expected[] = {":2: sockt: unknown key; ",
                              ":3: steps: invalid integer: abc; ",
                              ":5: limits.nice: out of range: 20; ",
                              ":6: limits.walls: unknown key; ",
                              ":8: policy.mode: invalid value: slice; ",
                              ":10: policy.partitions.p.colour: unknown key; ",
                              ":12: max_per_user: 3 is above max_concurrent 2"};
    assert_int_equal(check.problems.size(), 7);
    for (std::size_t i = 0; i < 7; i++)
        assert_contains(check.problems[i], p + expected[i]);
    assert_false((bool)r);
    assert_contains(r.error().message, p + ":2: sockt: unknown key; ");
    assert_contains(r.error().message, "(and 6 more: xmemd --config " + p + " --check-config");
}

static void syntax_error_has_line(void **)
{
    std::string path;
    auto r = load("socket: /a\npolicy: {mode: shard\n", &path);
    assert_false((bool)r);
    assert_contains(r.error().message, path + ":3: (syntax): ");
    assert_contains(r.error().message, "; mend the YAML at that line");
}

static void unreadable_file(void **)
{
    auto r = config_load("/nonexistent/xmem.yaml");
    assert_false((bool)r);
    assert_contains(r.error().message,
                    "/nonexistent/xmem.yaml: cannot read the config: No such file");
}

static void shipped_config_is_valid(void **)
{
    auto r = config_load(XMEM_SRC "/etc/xmem.yaml");
    if (!r)
        print_error("%s\n", r.error().message.c_str());
    assert_true((bool)r);
    assert_string_equal(r.value().policy.mode.c_str(), "shard");
}

// The keys' names before "estimator" and "steps" keep working (with a warning in the log).
static void renamed_keys_still_read(void **)
{
    auto r = load("profiler: [/p/old, --json]\niterations: 5\n");
    assert_true((bool)r);
    assert_string_equal(r.value().estimator[0].c_str(), "/p/old");
    assert_int_equal(r.value().steps, 5);
}

static void fingerprint_follows_content(void **)
{
    auto a = load("steps: 3\n"), b = load("steps: 3\n"), c = load("steps: 4\n");
    assert_string_equal(a.value().fingerprint.c_str(), b.value().fingerprint.c_str());
    assert_string_not_equal(a.value().fingerprint.c_str(), c.value().fingerprint.c_str());
}

// Profile jobs (profile_job.h): off by default; a partition is a name, srun a path with no
// space (the estimator gets the srun line as words).
static void profile_job_keys(void **)
{
    assert_true(config_defaults().profile_job.partition.empty());
    auto r = load("profile_partition: cpu\nprofile_partition_fast: true\nsrun: /opt/s/srun\n");
    assert_true((bool)r);
    assert_string_equal(r.value().profile_job.partition.c_str(), "cpu");
    assert_true(r.value().profile_job.fast);
    assert_string_equal(r.value().profile_job.srun.c_str(), "/opt/s/srun");
    expect_error("profile_partition: 'cpu --uid=0'\n", 1, "profile_partition", "invalid character");
    expect_error("srun: /opt/my slurm/srun\n", 1, "srun", "a path with a space");
}

int test_group_config(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_file_is_refused),       cmocka_unit_test(every_key),
        cmocka_unit_test(errors_name_file_line_key),   cmocka_unit_test(every_problem_is_listed),
        cmocka_unit_test(syntax_error_has_line),       cmocka_unit_test(unreadable_file),
        cmocka_unit_test(shipped_config_is_valid),     cmocka_unit_test(renamed_keys_still_read),
        cmocka_unit_test(fingerprint_follows_content), cmocka_unit_test(profile_job_keys),
    };
    return cmocka_run_group_tests_name("config", tests, nullptr, nullptr);
}
