// sweep: the --sweep spec and the command it rewrites per value (daemon/estimate/sweep.h).
// Running the estimates is integration test 19's.
#include "sweep.h"

#include "est_helpers.h"

using namespace esttest;
using namespace xmem::estimate;

static void a_list_keeps_its_order(void **)
{
    auto s = parse_sweep("--batch-size=32,8,16");
    assert_true(s.ok());
    EXPECT_STR(s.value().arg, "--batch-size");
    assert_false(s.value().interval);
    EXPECT_U64(s.value().values.size(), 3);
    EXPECT_STR(s.value().values[0], "32");
    EXPECT_STR(s.value().values[2], "16");
}

static void an_interval_is_two_whole_numbers(void **)
{
    auto s = parse_sweep("--batch-size=1..512");
    assert_true(s.ok());
    assert_true(s.value().interval);
    EXPECT_U64(s.value().lo, 1);
    EXPECT_U64(s.value().hi, 512);
    for (const char *bad : {"--batch-size=512..1", "--batch-size=1..x", "--batch-size=..4",
                            "--batch-size", "--batch-size=", "=8,16", "batch=8", "--bs=8,,16"}) {
        auto r = parse_sweep(bad);
        assert_false(r.ok());
        EXPECT_CONTAINS(r.error().message, "xmem: --sweep ");
    }
}

static void the_value_replaces_the_argument_where_it_stands(void **)
{
    std::vector<std::string> spaced = {"python", "train.py", "--batch-size", "32", "--lr", "1"};
    auto a = with_value(spaced, "--batch-size", "8");
    EXPECT_STR(a[3], "8");
    EXPECT_U64(a.size(), spaced.size());
    std::vector<std::string> joined = {"python", "train.py", "--batch-size=32"};
    EXPECT_STR(with_value(joined, "--batch-size", "8")[2], "--batch-size=8");
    // A prefix of another option is not it.
    std::vector<std::string> other = {"python", "train.py", "--batch-size-eval=4"};
    auto c = with_value(other, "--batch-size", "8");
    EXPECT_U64(c.size(), 4);
    EXPECT_STR(c[2], "--batch-size-eval=4");
    EXPECT_STR(c[3], "--batch-size=8");
}

int run_sweep_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_list_keeps_its_order),
        cmocka_unit_test(an_interval_is_two_whole_numbers),
        cmocka_unit_test(the_value_replaces_the_argument_where_it_stands),
    };
    return cmocka_run_group_tests_name("sweep", tests, nullptr, nullptr);
}
