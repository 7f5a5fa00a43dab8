// torch_choice: --torch wins; else the job's torch from the trace; newer than every known
// release gets the newest known rules and a note.
#include "torch_choice.h"

#include "est_helpers.h"

using namespace esttest;
using namespace xmem::estimate;

static void job_torch_from_the_trace(void **)
{
    auto c = choose_torch(std::nullopt, "2.4.1+cu121");
    assert_true(c.ok());
    EXPECT_STR(c.value().rules.str(), "2.4");
    assert_false(c.value().newer_than_known);
    EXPECT_STR(c.value().note, "");
    EXPECT_STR(choose_torch(std::nullopt, "1.13.1").value().rules.str(), "1.13");
}

static void explicit_torch_wins(void **)
{
    auto c = choose_torch(std::string("2.1"), "2.14.1");
    assert_true(c.ok());
    EXPECT_STR(c.value().rules.str(), "2.1");
    assert_false(c.value().newer_than_known);
}

static void newer_job_torch_gets_the_newest_rules(void **)
{
    auto c = choose_torch(std::nullopt, "2.16.0");
    assert_true(c.ok());
    EXPECT_STR(c.value().rules.str(), xmem::sim::newest_known_release().str());
    assert_true(c.value().newer_than_known);
    EXPECT_CONTAINS(c.value().note,
                    "xmem: warning: the job's torch 2.16.0 is newer than the newest");
    // The project venv's torch is a known release: its own rules, no warning.
    auto venv = choose_torch(std::nullopt, "2.14.1+cu130");
    assert_true(venv.ok() && !venv.value().newer_than_known);
    EXPECT_STR(venv.value().rules.str(), "2.14");
    EXPECT_STR(venv.value().note, "");
    EXPECT_CONTAINS(c.value().note, "(pass --torch");
}

static void trace_without_torch_and_bad_versions(void **)
{
    EXPECT_STR(choose_torch(std::nullopt, "").value().rules.str(), k_fallback_torch);
    auto bad = choose_torch(std::nullopt, "1.12.1");
    assert_false(bad.ok());
    EXPECT_CONTAINS(bad.error().message, "xmem: torch version '1.12.1'");
}

int run_torch_choice_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(job_torch_from_the_trace),
        cmocka_unit_test(explicit_torch_wins),
        cmocka_unit_test(newer_job_torch_gets_the_newest_rules),
        cmocka_unit_test(trace_without_torch_and_bad_versions),
    };
    return cmocka_run_group_tests_name("torch_choice", tests, nullptr, nullptr);
}
