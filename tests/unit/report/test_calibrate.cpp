// test-calibrate.cpp — the margin `xmem calibrate` proposes: the smallest whole percent at
// which the share of pairs exceeding limit*(1+m/100) meets the target, with censored OOMs
// counted as exceeding; ties at the boundary; too few pairs; the error distribution, slack
// and which jobs are pairs.
#include "calibrate.h"
#include "cmocka.hpp"
#include "test-list.h"

#include <cmath>

using namespace xmem::report;

static Pair measured(uint64_t limit, uint64_t peak)
{
    return Pair{limit, peak, false};
}

static Pair oom(uint64_t limit)
{
    return Pair{limit, 0, true};
}

static void all_under_needs_no_margin(void **)
{
    std::vector<Pair> p{measured(100, 50), measured(100, 100), measured(1000, 999)};
    assert_int_equal(*smallest_margin(p, 0.0, 100), 0);
    assert_int_equal(exceeding(p, 0), 0);
}

static void all_over_takes_the_largest_error(void **)
{
    // 120/100 needs 20%, 1150/1000 needs 15%: at target 0 the largest decides.
    std::vector<Pair> p{measured(100, 120), measured(1000, 1150)};
    assert_int_equal(*smallest_margin(p, 0.0, 100), 20);
    assert_int_equal(exceeding(p, 19), 1);
    assert_int_equal(exceeding(p, 14), 2);
    // Half may exceed: 15% leaves only the 20% job over.
    assert_int_equal(*smallest_margin(p, 0.5, 100), 15);
    // Beyond the bound: no proposal.
    assert_false(smallest_margin({measured(100, 300)}, 0.0, 100).has_value());
    assert_false(smallest_margin({}, 0.5, 100).has_value());
}

static void ties_at_the_boundary_do_not_exceed(void **)
{
    // Exactly limit*(1+m/100) is within the share; one byte more is not.
    std::vector<Pair> p{measured(1000, 1100)};
    assert_int_equal(*smallest_margin(p, 0.0, 100), 10);
    p = {measured(1000, 1101)};
    assert_int_equal(*smallest_margin(p, 0.0, 100), 11);
    // Rate exactly at the target meets it: 1 of 4 at 0.25.
    p = {measured(100, 150), measured(100, 90), measured(100, 90), measured(100, 90)};
    assert_int_equal(*smallest_margin(p, 0.25, 100), 0);
    assert_int_equal(*smallest_margin(p, 0.24, 100), 50);
    // Large limits do not overflow: 2^50 bytes with 100% margin.
    p = {measured(1ull << 50, (1ull << 51) - 1)};
    assert_int_equal(*smallest_margin(p, 0.0, 100), 100);
}

static void censored_ooms_exceed_at_any_margin(void **)
{
    std::vector<Pair> p{oom(100), measured(100, 105), measured(100, 90), measured(100, 90)};
    assert_int_equal(exceeding(p, 100), 1);
    assert_int_equal(*smallest_margin(p, 0.25, 100), 5); // the OOM uses the whole allowance
    assert_false(smallest_margin(p, 0.2, 100).has_value());
    // Slack is over the measured pairs only: at 10% 110-105, 110-90, 110-90 -> 15 mean.
    assert_true(std::fabs(mean_slack_bytes(p, 10) - 15.0) < 1e-9);
}

static JobRecord job(const char *gpu, const char *account, uint64_t limit,
                     std::optional<uint64_t> peak, bool oom = false, bool packed = true)
{
    JobRecord j;
    j.ts = 1000;
    j.gpu = gpu;
    j.account = account;
    j.limit_bytes = limit;
    j.capacity_bytes = 1000;
    j.measured_bytes = peak;
    j.cuda_oom = oom;
    j.packed = packed;
    return j;
}

static void groups_skips_and_minimum(void **)
{
    std::vector<JobRecord> jobs{
        job("A100-40GB", "physics", 100, 110),
        job("A100-40GB", "physics", 100, 105),
        job("A100-40GB", "bio", 100, 90),
        job("A100-40GB", "", 100, std::nullopt),
        job("A100-40GB", "", 100, 500, true, false), // OOM on a whole GPU: skipped
        job("H100-80GB", "bio", 100, 101),
        job("", "", 0, std::nullopt),            // no estimate
        job("H100-80GB", "bad\"name", 100, 102), // an older row: site-wide only
        job("H100-80GB", "a b", 100, 99),        // likewise (a space)
    };
    CalibrateOptions opt;
    opt.target = 0;
    opt.min_pairs = 3;
    opt.by_account = true;
    auto all = calibrate(
        jobs, opt, [](const std::string &, const std::string &a) { return a.empty() ? 10 : 7; });
    // A100 (3 pairs), A100/bio (1), A100/physics (2), H100 (1), H100/bio (1).
    assert_int_equal(all.size(), 5);
    assert_string_equal(all[0].gpu.c_str(), "A100-40GB");
    assert_true(all[0].account.empty());
    assert_int_equal(all[0].pairs.size(), 3);
    assert_int_equal(*all[0].proposed, 10);
    assert_int_equal(all[0].current_percent, 10);
    assert_int_equal(all[0].skipped[Skip::no_measured_peak], 1);
    assert_int_equal(all[0].skipped[Skip::whole_gpu_oom], 1);
    assert_string_equal(all[2].account.c_str(), "physics");
    assert_int_equal(all[2].current_percent, 7);
    assert_false(all[2].proposed.has_value()); // 2 pairs, fewer than 3
    assert_contains(all[2].why_none, "2 pair(s), fewer than the 3 needed");
    assert_int_equal(all[3].pairs.size(), 3); // H100 site-wide: bio's and the two bad names'
    assert_true(all[3].proposed.has_value());
    assert_string_equal(all[4].account.c_str(), "bio");
    assert_false(all[4].proposed.has_value());
    std::string text = render_evidence(all, opt);
    assert_contains(text, "A100-40GB: 3 pairs (3 measured, 0 out of memory on a share");
    assert_contains(text, "proposed margin 10% (current 10%): 0 of 3 pairs (0.00%) exceed");
    assert_contains(text, "skipped 1: no measured peak");
    assert_contains(text, "error (measured/limit - 1): min -10.0%  p50 +5.0%  p90 +10.0%");
    assert_contains(text, "  account physics: 2 pairs");
}

static void percentiles_are_nearest_rank(void **)
{
    std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    assert_true(percentile(v, 50) == 5);
    assert_true(percentile(v, 90) == 9);
    assert_true(percentile(v, 99) == 10);
    assert_true(percentile(v, 0) == 1);
    assert_true(percentile({}, 50) == 0);
    assert_true(std::fabs(pair_error(measured(200, 250)) - 0.25) < 1e-12);
}

// The report's figures from the same pairs: weeks from Monday, days, requeues, levels.
static void report_error_over_time_and_levels(void **)
{
    assert_string_equal(period_key(0, false).c_str(), "1969-12-29"); // a Thursday's Monday
    assert_string_equal(period_key(4 * 86400, false).c_str(), "1970-01-05");
    assert_string_equal(period_key(4 * 86400 - 1, false).c_str(), "1969-12-29");
    assert_string_equal(period_key(4 * 86400 + 5, true).c_str(), "1970-01-05");
    std::vector<JobRecord> jobs{job("A100-40GB", "", 100, 110), job("A100-40GB", "", 100, 90),
                                job("A100-40GB", "", 100, 80), job("A100-40GB", "", 100, {}, true)};
    jobs[0].enforcement = "dmem";
    jobs[3].oom_requeued = true;
    jobs[3].enforcement = "client";
    jobs[2].ts = 1000 + 7 * 86400; // the next week
    Options opt;
    Report r = build_report(opt, jobs);
    assert_int_equal(r.error_over_time.size(), 2);
    const ErrorPeriod &first = r.error_over_time.begin()->second;
    assert_int_equal(first.pairs, 3); // two measured, one censored
    assert_int_equal(first.errors.size(), 2);
    assert_true(std::fabs(percentile(first.errors, 50) + 0.1) < 1e-12);
    assert_int_equal(first.ooms, 1);
    assert_int_equal(first.requeues, 1);
    assert_int_equal(r.total.oom_requeued, 1);
    assert_int_equal(r.total.by_enforcement["dmem"], 1);
    assert_int_equal(r.total.by_enforcement["client"], 1);
    assert_int_equal(r.total.by_enforcement["unknown"], 2);
    assert_contains(render_table(r), "estimate error over time (per week, from its Monday");
    assert_contains(render_json(r), "\"enforcement\":{\"none\":0,\"client\":1,"
                                    "\"mps-server\":0,\"dmem\":1,\"unknown\":2}");
    assert_contains(render_json(r), "\"error_over_time\":{\"period\":\"week\",\"rows\":{"
                                    "\"1969-12-29\":{\"pairs\":3,\"median_error_pct\":-10.00,"
                                    "\"p90_error_pct\":10.00,\"ooms\":1,\"requeues\":1}");
    assert_contains(render_csv(r), ",oom_requeued,enforced_none,enforced_client,"
                                   "enforced_mps-server,enforced_dmem,enforced_unknown,"
                                   "gpu_hours,memory_gib_hours_saved\n");
    assert_contains(render_html(r),
                    "<tr class=\"period\" data-key=\"1970-01-05\" data-pairs=\"1\"");
    opt.by_day = true;
    assert_int_equal(build_report(opt, jobs).error_over_time.size(), 2);
}

int test_group_calibrate(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_under_needs_no_margin),
        cmocka_unit_test(all_over_takes_the_largest_error),
        cmocka_unit_test(ties_at_the_boundary_do_not_exceed),
        cmocka_unit_test(censored_ooms_exceed_at_any_margin),
        cmocka_unit_test(groups_skips_and_minimum),
        cmocka_unit_test(percentiles_are_nearest_rank),
        cmocka_unit_test(report_error_over_time_and_levels),
    };
    return cmocka_run_group_tests_name("calibrate", tests, nullptr, nullptr);
}
