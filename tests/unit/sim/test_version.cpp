// TorchVersion parsing and the per-release behaviour table (allocator.md 11).
#include "sim_helpers.h"

using namespace simtest;

static void parses_release_strings(void **)
{
    auto v = TorchVersion::parse("1.13.1");
    assert_true(v.ok());
    EXPECT_I64(v.value().major, 1);
    EXPECT_I64(v.value().minor, 13);
    EXPECT_STR(TorchVersion::parse("2.11.0+cu130").value().str(), "2.11");
    EXPECT_STR(TorchVersion::parse("2.4").value().str(), "2.4");
    EXPECT_STR(TorchVersion::parse("2.1.0a0+git1234").value().str(), "2.1");
}

static void rejects_bad_and_unsupported(void **)
{
    for (const char *s : {"", "2", "two.six", "2.x", "1.12.1", "3.0", "2.6junk"}) {
        auto v = TorchVersion::parse(s);
        if (v.ok()) {
            print_error("'%s' parsed\n", s);
            fail();
        }
        EXPECT_CONTAINS(v.error().message, "xmem: torch version '");
    }
    EXPECT_CONTAINS(TorchVersion::parse("1.12").error().message, "unsupported");
}

// allocator.md 11: one row per difference.
static void profile_follows_spec_table(void **)
{
    const VersionProfile p113 = profile_for(version("1.13"));
    const VersionProfile p20 = profile_for(version("2.0"));
    const VersionProfile p26 = profile_for(version("2.6"));
    const VersionProfile p210 = profile_for(version("2.10"));
    assert_true(p113.roundup_bypass_key && !p20.roundup_bypass_key);
    assert_true(p113.roundup_d1_returns_size &&
                profile_for(version("2.3")).roundup_d1_returns_size);
    assert_false(profile_for(version("2.4")).roundup_d1_returns_size);
    assert_true(p26.roundup_gt_fills_last_slot && !p210.roundup_gt_fills_last_slot);
    assert_false(p20.expandable_segments);
    assert_true(profile_for(version("2.1")).expandable_segments);
    assert_true(!profile_for(version("2.5")).max_non_split_rounding_key &&
                p26.max_non_split_rounding_key);
    assert_true(!p26.max_split_min_inclusive && p210.max_split_min_inclusive);
    // 2.9.1's libc10 still says "must be > " (allocator.md 0).
    assert_false(profile_for(version("2.9")).max_split_min_inclusive);
    assert_true(!p113.requested_bytes && p20.requested_bytes);
    assert_true(!p26.fraction_one_is_unlimited && p210.fraction_one_is_unlimited);
    assert_true(p113.grammar == ConfGrammar::v1_13 && p20.grammar == ConfGrammar::v2);
}

// allocator.md 11, 2.9-2.15: which release brought which key, stat and OOM text.
static void profile_of_the_wheel_releases(void **)
{
    const VersionProfile p29 = profile_for(version("2.9"));
    const VersionProfile p210 = profile_for(version("2.10"));
    const VersionProfile p211 = profile_for(version("2.11"));
    const VersionProfile p212 = profile_for(version("2.12"));
    const VersionProfile p213 = profile_for(version("2.13"));
    const VersionProfile p214 = profile_for(version("2.14"));
    const VersionProfile p215 = profile_for(version("2.15"));
    assert_true(!profile_for(version("2.8")).graph_reuse_key && p29.graph_reuse_key);
    assert_true(!p29.fraction_key && p210.fraction_key);
    assert_true(!p210.large_segment_key && p211.large_segment_key);
    assert_true(!p211.oom_rejection && p212.oom_rejection);
    assert_true(!p212.pinned_cache_keys && p213.pinned_cache_keys);
    assert_true(!p214.expandable_reserve_keys && p215.expandable_reserve_keys);
    assert_true(p29.oom_style == OomStyle::v2_2 && p210.oom_style == OomStyle::v2_10);
    assert_true(p211.oom_style == OomStyle::v2_11 && p215.oom_style == OomStyle::v2_11);
    // What the simulator models otherwise is the newest code's in all of them.
    for (const VersionProfile &p : {p212, p213, p214, p215})
        assert_true(p.max_split_min_inclusive && !p.roundup_gt_fills_last_slot &&
                    p.fraction_one_is_unlimited && p.expandable_segments);
}

// --torch accepts the table's releases; a job's newer torch gets the newest known rules.
static void known_releases_and_job_torch(void **)
{
    EXPECT_STR(newest_known_release().str(), "2.15");
    for (const char *v : {"1.13", "2.10", "2.12", "2.13", "2.14", "2.15"})
        assert_true(is_known_release(version(v)));
    assert_false(is_known_release(version("2.16")));
    EXPECT_STR(known_releases_text(), "1.13, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 2.7, 2.8, 2.9, "
                                      "2.10, 2.11, 2.12, 2.13, 2.14, 2.15");
    auto same = rules_for_job_torch("2.6.0+cu124");
    assert_true(same.ok() && !same.value().newer_than_known);
    EXPECT_STR(same.value().rules.str(), "2.6");
    for (const char *job : {"2.12.1+cu130", "2.13.0", "2.14.1+cu130", "2.15.0+cu132"}) {
        auto r = rules_for_job_torch(job);
        assert_true(r.ok() && !r.value().newer_than_known);
        assert_true(std::string(job).rfind(r.value().rules.str() + ".", 0) == 0);
    }
    auto newer = rules_for_job_torch("2.16.0");
    assert_true(newer.ok() && newer.value().newer_than_known);
    EXPECT_STR(newer.value().rules.str(), "2.15");
    assert_false(rules_for_job_torch("0.4.1").ok());
}

int run_version_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_release_strings),
        cmocka_unit_test(rejects_bad_and_unsupported),
        cmocka_unit_test(profile_follows_spec_table),
        cmocka_unit_test(profile_of_the_wheel_releases),
        cmocka_unit_test(known_releases_and_job_torch),
    };
    return cmocka_run_group_tests_name("version", tests, nullptr, nullptr);
}
