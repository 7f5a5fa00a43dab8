// xmem-profile command line and command resolution.
#include "locate.h"
#include "profile_options.h"
#include "test-list.h"

#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

using namespace xmem::profile;

#define EXPECT_PATH(got, want) assert_string_equal((got).c_str(), (want).c_str())

namespace
{
ParseResult parse(std::initializer_list<const char *> args, Options *opts)
{
    std::vector<const char *> argv{"xmem-profile"};
    argv.insert(argv.end(), args.begin(), args.end());
    return parse_options(static_cast<int>(argv.size()), argv.data(), opts);
}
} // namespace

static void full_command_line(void **state)
{
    Options o;
    ParseResult r = parse({"--out", "t.trace", "--steps", "5", "--threads", "4", "--timeout", "30",
                           "--python", "/opt/py", "-v", "--what-if", "amp=bf16", "--", "python3",
                           "train.py", "--epochs", "100"},
                          &o);
    assert_int_equal(static_cast<int>(r.status), static_cast<int>(ParseStatus::ok));
    assert_string_equal(o.out.c_str(), "t.trace");
    assert_int_equal(o.steps, 5);
    assert_int_equal(o.threads, 4);
    assert_int_equal(o.timeout_s, 30);
    assert_string_equal(o.python.c_str(), "/opt/py");
    assert_true(o.verbose);
    assert_string_equal(o.what_if.c_str(), "amp=bf16"); // the capture checks the change itself
    assert_int_equal(o.command.size(), 4);
    assert_string_equal(o.command[3].c_str(), "100"); // options after the command are its own
}

static void defaults(void **state)
{
    Options o;
    assert_int_equal(static_cast<int>(parse({"--out", "t", "train.py"}, &o).status),
                     static_cast<int>(ParseStatus::ok));
    assert_int_equal(o.steps, k_default_steps);
    assert_int_equal(o.timeout_s, k_default_timeout_s);
    assert_int_equal(o.threads, 0);
    assert_false(o.verbose);
    assert_true(o.what_if.empty());
}

static void bad_input_names_the_option_and_the_fix(void **state)
{
    struct Case {
        std::initializer_list<const char *> args;
        const char *message;
    };
    const Case cases[] = {
        {{"--steps", "0", "--out", "t", "x.py"},
         "xmem: --steps: invalid value: 0 (expected an integer from 1 to 1000)"},
        {{"--steps", "3x", "--out", "t", "x.py"},
         "xmem: --steps: invalid value: 3x (expected an integer from 1 to 1000)"},
        {{"--timeout", "-1", "--out", "t", "x.py"},
         "xmem: --timeout: invalid value: -1 (expected an integer from 1 to 86400)"},
        {{"--frobnicate", "--out", "t", "x.py"}, "xmem: --frobnicate: unknown option (see --help)"},
        {{"--out"}, "xmem: --out: missing value (see --help)"},
        {{"--out", "", "x.py"}, "xmem: --out: empty value"},
        {{"x.py"}, "xmem: --out TRACE is required (where to write the trace)"},
        {{"--out", "t"},
         "xmem: no command given (usage: xmem-profile --out TRACE -- python3 train.py ...)"},
    };
    for (const Case &c : cases) {
        Options o;
        ParseResult r = parse(c.args, &o);
        assert_int_equal(static_cast<int>(r.status), static_cast<int>(ParseStatus::error));
        assert_string_equal(r.error.c_str(), c.message);
    }
}

// A directory with executables named NAMES, for PATH lookups.
static std::string bin_dir_with(std::initializer_list<const char *> names)
{
    char tmpl[] = "/tmp/xmem-test-path-XXXXXX";
    std::string dir = mkdtemp(tmpl);
    for (const char *n : names) {
        std::string path = dir + "/" + n;
        FILE *f = fopen(path.c_str(), "w");
        fputs("#!/bin/sh\n", f);
        fclose(f);
        chmod(path.c_str(), 0755);
    }
    return dir;
}

static void remove_bin_dir(const std::string &dir, std::initializer_list<const char *> names)
{
    for (const char *n : names)
        unlink((dir + "/" + n).c_str());
    rmdir(dir.c_str());
}

static std::string resolved(std::vector<std::string> cmd, const std::string &override,
                            const std::string &path_env)
{
    auto c = resolve_command(cmd, override, path_env);
    assert_true(c.ok());
    return c.value().argv[0];
}

// Issue 16: python resolves on the job's PATH (a venv first), not /usr/bin/python3.
static void python_resolves_on_the_jobs_path(void **state)
{
    std::string venv = bin_dir_with({"python", "python3", "python3.11"});
    std::string other = bin_dir_with({"python3"});
    std::string path = venv + ":" + other + ":/usr/bin";
    EXPECT_PATH(resolved({"python", "t.py"}, "", path), venv + "/python");
    EXPECT_PATH(resolved({"python3.11", "t.py"}, "", path), venv + "/python3.11");
    EXPECT_PATH(resolved({"python3", "t.py"}, "", other + ":" + venv), other + "/python3");
    EXPECT_PATH(resolved({"/abs/bin/python3", "t.py"}, "", path), std::string("/abs/bin/python3"));
    auto script = resolve_command({"/home/u/train.py", "--epochs", "3"}, "", path);
    assert_true(script.ok());
    EXPECT_PATH(script.value().argv[0], venv + "/python3");
    EXPECT_PATH(script.value().python, venv + "/python3");
    assert_int_equal(script.value().argv.size(), 4);
    assert_string_equal(script.value().name.c_str(), "train.py");
    auto missing = resolve_command({"python3.99", "t.py"}, "", path);
    assert_false(missing.ok());
    assert_string_equal(missing.error().message.c_str(),
                        "xmem: python3.99: not found on the job's PATH (activate the job's "
                        "environment, or pass --python)");
    assert_true(search_path("python3", "/nonexistent-dir").empty());
    remove_bin_dir(venv, {"python", "python3", "python3.11"});
    remove_bin_dir(other, {"python3"});
}

static void override_replaces_every_interpreter(void **state)
{
    EXPECT_PATH(resolved({"python", "-u", "train.py"}, "/o/python", ""), std::string("/o/python"));
    EXPECT_PATH(resolved({"/abs/python3", "train.py"}, "/o/python", ""), std::string("/o/python"));
    EXPECT_PATH(resolved({"train.py"}, "/o/python", ""), std::string("/o/python"));
    assert_string_equal(python_override("/opt/venv/bin/python").c_str(), "/opt/venv/bin/python");
    setenv("XMEM_PYTHON", "/env/python", 1);
    assert_string_equal(python_override("").c_str(), "/env/python");
    assert_string_equal(python_override("/flag").c_str(), "/flag");
    unsetenv("XMEM_PYTHON");
    assert_string_equal(python_override("").c_str(), "");
}

static void command_names_and_non_python_commands(void **state)
{
    auto c = resolve_command({"python", "-u", "train.py", "--lr", "1"}, "/p", "");
    assert_string_equal(c.value().argv[1].c_str(), "-u");
    assert_string_equal(c.value().name.c_str(), "train.py");
    c = resolve_command({"python3.11", "-m", "pkg.train"}, "/p", "");
    assert_string_equal(c.value().name.c_str(), "pkg.train");
    c = resolve_command({"./run.sh", "a"}, "", ""); // anything else runs as given
    assert_string_equal(c.value().argv[0].c_str(), "./run.sh");
    assert_string_equal(c.value().name.c_str(), "run.sh");
    assert_string_equal(c.value().python.c_str(), "");
    c = resolve_command({"python3-config"}, "", ""); // not an interpreter name
    assert_string_equal(c.value().argv[0].c_str(), "python3-config");
    assert_true(available_cpus() >= 1);
}

int xmem_test_group_profile_options(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_command_line),
        cmocka_unit_test(defaults),
        cmocka_unit_test(bad_input_names_the_option_and_the_fix),
        cmocka_unit_test(python_resolves_on_the_jobs_path),
        cmocka_unit_test(override_replaces_every_interpreter),
        cmocka_unit_test(command_names_and_non_python_commands),
    };
    return cmocka_run_group_tests_name("options", tests, nullptr, nullptr);
}
