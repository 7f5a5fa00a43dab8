// test-dates.cpp — --since/--until dates and the option parser's one-line errors.
#include "cmocka.hpp"
#include "report.h"
#include "test-list.h"

using namespace xmem::report;

static void accepts_dates_and_times(void **)
{
    assert_int_equal(*parse_date("1970-01-02", false), 86400);
    assert_int_equal(*parse_date("1970-01-02", true), 2 * 86400); // --until: the whole day
    assert_int_equal(*parse_date("2026-12-02T17:45", false), 1796233500);
    assert_int_equal(*parse_date("2026-12-02 17:45:30", true), 1796233530);
    assert_int_equal(*parse_date("2024-02-29", false), 1709164800); // leap day
}

static void rejects_bad_dates(void **)
{
    for (const char *bad : {"", "yesterday", "2026-13-01", "2026-02-30", "2023-02-29", "2026-1-01",
                            "2026-12-02T25:00", "2026-12-02T10:60", "2026-12-02T10",
                            "2026-12-02X10:00", "2026-12-02T10:00:00Z", "12/02/2026"})
        assert_false(parse_date(bad, false).has_value());
}

static xmem::Result<void> parse(std::vector<const char *> args, Options &opt)
{
    args.insert(args.begin(), "xmem-report");
    return parse_args((int)args.size(), const_cast<char **>(args.data()), opt);
}

static void options_parse_and_fail_in_one_line(void **)
{
    Options opt;
    assert_true(parse({"--db", "/x.sqlite", "--by=account", "--format", "csv", "--since",
                       "2026-01-01", "--until", "2026-01-31", "-o", "out.csv"},
                      opt)
                    .ok());
    assert_string_equal(opt.db.c_str(), "/x.sqlite");
    assert_true(opt.by == GroupBy::account);
    assert_true(opt.format == Format::csv);
    assert_int_equal(*opt.until - *opt.since, 31 * 86400);
    for (std::vector<const char *> bad : {std::vector<const char *>{"--by", "team"},
                                          {"--format", "pdf"},
                                          {"--since", "soon"},
                                          {"--until"},
                                          {"--frobnicate"},
                                          {"--since", "2026-02-01", "--until", "2026-01-01"}}) {
        Options o;
        auto r = parse(bad, o);
        assert_false(r.ok());
        const std::string &err = r.error().message;
        assert_true(err.rfind("xmem: report: ", 0) == 0);
        assert_true(err.find('\n') == std::string::npos);
    }
}

int test_group_dates(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepts_dates_and_times),
        cmocka_unit_test(rejects_bad_dates),
        cmocka_unit_test(options_parse_and_fail_in_one_line),
    };
    return cmocka_run_group_tests_name("dates", tests, nullptr, nullptr);
}
