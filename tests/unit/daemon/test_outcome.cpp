// test-outcome.cpp — the numbered outcome table: fixed numbers, unique names, and
// docs/outcomes.md listing exactly the same code/name pairs.
#include "cmocka.hpp"
#include "outcome.h"
#include "test-list.h"

#include <fstream>
#include <map>
#include <regex>
#include <set>

using namespace xmem::server;

static void numbers_are_fixed(void **)
{
    // These are stored in ledgers and read by the plugin: changing one is a breaking change.
    assert_int_equal(static_cast<int>(Outcome::estimated), 0);
    assert_int_equal(static_cast<int>(Outcome::busy), 1);
    assert_int_equal(static_cast<int>(Outcome::bad_frame), 3);
    assert_int_equal(static_cast<int>(Outcome::profile_timeout), 10);
    assert_int_equal(static_cast<int>(Outcome::spawn_failed), 18);
    assert_int_equal(static_cast<int>(Outcome::sign_failed), 21);
    assert_int_equal(static_cast<int>(Outcome::exceeds_gpu), 22);
    assert_int_equal(static_cast<int>(Outcome::job_end_rejected), 26);
    assert_int_equal(static_cast<int>(Outcome::recorded), 30);
    assert_int_equal(static_cast<int>(Outcome::answered), 31);
    assert_string_equal(std::string(outcome_name(Outcome::profile_file_limit)).c_str(),
                        "profile_file_limit");
}

static void names_and_numbers_unique(void **)
{
    int n;
    const Outcome *all = outcome_all(&n);
    std::set<int> nums;
    std::set<std::string> names;
    for (int i = 0; i < n; i++) {
        assert_true(nums.insert(static_cast<int>(all[i])).second);
        assert_true(names.insert(std::string(outcome_name(all[i]))).second);
        assert_true(outcome_text(all[i]).size() > 5);
        if (i > 0)
            assert_true(static_cast<int>(all[i]) > static_cast<int>(all[i - 1]));
    }
}

static void doc_matches_table(void **)
{
    std::ifstream f(XMEM_SRC "/docs/outcomes.md");
    assert_true(f.good());
    std::map<int, std::string> doc;
    std::regex row(R"(^\| (\d+) \| `([a-z_]+)` \|)");
    std::string line;
    while (std::getline(f, line)) {
        std::smatch m;
        if (std::regex_search(line, m, row))
            doc[std::stoi(m[1])] = m[2];
    }
    int n;
    const Outcome *all = outcome_all(&n);
    assert_int_equal(doc.size(), n);
    for (int i = 0; i < n; i++) {
        int code = static_cast<int>(all[i]);
        assert_true(doc.count(code));
        assert_string_equal(doc[code].c_str(), std::string(outcome_name(all[i])).c_str());
    }
}

static void profile_failures(void **)
{
    assert_true(outcome_is_profile_failure(Outcome::profile_timeout));
    assert_true(outcome_is_profile_failure(Outcome::spawn_failed));
    assert_false(outcome_is_profile_failure(Outcome::estimated));
    assert_false(outcome_is_profile_failure(Outcome::deadline_expired));
}

static void answered(void **)
{
    assert_true(outcome_is_answered(Outcome::estimated));
    assert_true(outcome_is_answered(Outcome::exceeds_gpu));
    assert_false(outcome_is_answered(Outcome::sign_failed));
    assert_false(outcome_is_answered(Outcome::profile_timeout));
}

int test_group_outcome(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(numbers_are_fixed), cmocka_unit_test(names_and_numbers_unique),
        cmocka_unit_test(doc_matches_table), cmocka_unit_test(profile_failures),
        cmocka_unit_test(answered),
    };
    return cmocka_run_group_tests_name("outcome", tests, nullptr, nullptr);
}
