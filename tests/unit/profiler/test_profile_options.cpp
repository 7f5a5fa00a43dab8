// xmem-profile command line and command resolution.
#include "locate.h"
#include "profile_options.h"
#include "test-list.h"

using namespace xmem::profile;

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
    ParseResult r =
        parse({"--out", "t.trace", "--steps", "5", "--threads", "4", "--timeout", "30", "--python",
               "/opt/py", "-v", "--", "python3", "train.py", "--epochs", "100"},
              &o);
    assert_int_equal(static_cast<int>(r.status), static_cast<int>(ParseStatus::ok));
    assert_string_equal(o.out.c_str(), "t.trace");
    assert_int_equal(o.steps, 5);
    assert_int_equal(o.threads, 4);
    assert_int_equal(o.timeout_s, 30);
    assert_string_equal(o.python.c_str(), "/opt/py");
    assert_true(o.verbose);
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

static void python_commands_use_the_torch_interpreter(void **state)
{
    Command c = resolve_command({"python", "-u", "train.py", "--lr", "1"}, "/usr/bin/python3");
    assert_string_equal(c.argv[0].c_str(), "/usr/bin/python3");
    assert_string_equal(c.argv[1].c_str(), "-u");
    assert_string_equal(c.name.c_str(), "train.py");
    c = resolve_command({"/home/u/jobs/train.py", "--epochs", "3"}, "/usr/bin/python3");
    assert_int_equal(c.argv.size(), 4);
    assert_string_equal(c.argv[1].c_str(), "/home/u/jobs/train.py");
    assert_string_equal(c.name.c_str(), "train.py");
    c = resolve_command({"python3.11", "-m", "pkg.train"}, "/p");
    assert_string_equal(c.name.c_str(), "pkg.train");
    c = resolve_command({"./run.sh", "a"}, "/p"); // anything else runs as given
    assert_string_equal(c.argv[0].c_str(), "./run.sh");
    assert_string_equal(c.name.c_str(), "run.sh");
    c = resolve_command({"python3-config"}, "/p"); // not an interpreter name
    assert_string_equal(c.argv[0].c_str(), "python3-config");
}

static void interpreter_choice(void **state)
{
    assert_string_equal(find_python("/opt/venv/bin/python").c_str(), "/opt/venv/bin/python");
    setenv("XMEM_PYTHON", "/env/python", 1);
    assert_string_equal(find_python("").c_str(), "/env/python");
    unsetenv("XMEM_PYTHON");
    assert_true(available_cpus() >= 1);
}

int xmem_test_group_profile_options(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_command_line),
        cmocka_unit_test(defaults),
        cmocka_unit_test(bad_input_names_the_option_and_the_fix),
        cmocka_unit_test(python_commands_use_the_torch_interpreter),
        cmocka_unit_test(interpreter_choice),
    };
    return cmocka_run_group_tests_name("options", tests, nullptr, nullptr);
}
