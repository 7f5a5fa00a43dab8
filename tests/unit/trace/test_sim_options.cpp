// `xmem sim` command line: every option, both spellings, and one-line usage errors.
#include "test_helpers.h"
#include "test-list.h"

#include "cli/sim_options.h"

using xmem::cli::parse_sim_options;
using xmem::cli::SimOptions;

static SimOptions parse_ok(std::vector<std::string> args)
{
    auto r = parse_sim_options(args);
    if (!r.ok())
        print_error("%s\n", r.error().message.c_str());
    assert_true(r.ok());
    return r.value();
}

static std::string parse_error(std::vector<std::string> args)
{
    auto r = parse_sim_options(args);
    assert_false(r.ok());
    return r.error().message;
}

static void parses_every_option(void **)
{
    SimOptions o =
        parse_ok({"--torch", "1.13", "--alloc-conf=max_split_size_mb:128", "--capacity", "40GiB",
                  "--json", "--timeline", "t.html", "--verify", "--device=1", "x.json"});
    assert_string_equal(o.torch->c_str(), "1.13");
    assert_string_equal(o.alloc_conf.c_str(), "max_split_size_mb:128");
    assert_int_equal(*o.capacity, 40ULL << 30);
    assert_true(o.json);
    assert_string_equal(o.timeline->c_str(), "t.html");
    assert_true(o.verify);
    assert_int_equal(o.device, 1);
    assert_string_equal(o.trace.c_str(), "x.json");
    SimOptions plain = parse_ok({"-"});
    assert_false(plain.torch.has_value());
    assert_false(plain.capacity.has_value());
    assert_false(plain.json);
    assert_string_equal(plain.trace.c_str(), "-");
    assert_true(parse_ok({"--help"}).help);
    assert_true(parse_ok({"x", "-h", "--bogus"}).help); // help wins wherever it is
}

static void from_pickle_names_the_trace(void **)
{
    SimOptions o = parse_ok({"--verify", "--from-pickle", "memory.pickle"});
    assert_true(o.from_pickle);
    assert_string_equal(o.trace.c_str(), "memory.pickle");
    assert_true(parse_ok({"--from-pickle=m.pickle"}).from_pickle);
    assert_false(parse_ok({"m.json"}).from_pickle);
    assert_contains(parse_error({"a.json", "--from-pickle", "b.pickle"}),
                    "more than one trace given ('a.json' and 'b.pickle')");
    assert_contains(parse_error({"--from-pickle="}), "--from-pickle needs a snapshot file");
}

static void usage_errors_are_one_line(void **)
{
    assert_contains(parse_error({}), "xmem: sim: no trace given (see 'xmem sim --help')");
    assert_contains(parse_error({"a", "b"}), "more than one trace given ('a' and 'b')");
    assert_contains(parse_error({"--bogus", "a"}), "unknown option '--bogus'");
    assert_contains(parse_error({"-x", "a"}), "unknown option '-x'");
    assert_contains(parse_error({"a", "--torch"}), "--torch needs a value");
    assert_contains(parse_error({"--capacity", "40X", "a"}), "--capacity '40X' is not a size");
    assert_contains(parse_error({"--device", "-1", "a"}), "--device '-1' is not a device index");
    assert_contains(parse_error({"--timeline=", "a"}), "--timeline needs an output file name");
    assert_contains(parse_error({"--json=1", "a"}), "unknown option '--json'");
}

int run_sim_options_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_every_option),
        cmocka_unit_test(from_pickle_names_the_trace),
        cmocka_unit_test(usage_errors_are_one_line),
    };
    return cmocka_run_group_tests_name("sim_options", tests, NULL, NULL);
}
