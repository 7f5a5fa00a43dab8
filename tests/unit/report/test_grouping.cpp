// test-grouping.cpp — GPU-hours freed, per-group sums that add up to the total, failures,
// and the --since/--until window.
#include "cmocka.hpp"
#include "report.h"
#include "test-list.h"

#include <cmath>

using namespace xmem::report;

static const uint64_t k_gib = 1ull << 30;

static JobRecord job(const char *user, const char *account, uint64_t limit_gib, uint64_t seconds,
                     int exit_status = 0, bool packed = true)
{
    JobRecord j;
    j.ts = 86400 + (int64_t)seconds;
    j.user = user;
    j.account = account;
    j.partition = "gpu";
    j.gpu = "A100-80GB";
    j.capacity_bytes = 80 * k_gib;
    j.limit_bytes = limit_gib * k_gib;
    j.estimate_bytes = (limit_gib - 1) * k_gib;
    j.elapsed_seconds = seconds;
    j.exit_status = exit_status;
    j.packed = packed;
    return j;
}

static void gpu_hours_freed_is_unused_share_times_hours(void **)
{
    // 20 of 80 GiB for 2 h frees three quarters of a GPU for 2 h.
    assert_true(std::fabs(gpu_hours_freed(job("a", "x", 20, 7200)) - 1.5) < 1e-9);
    assert_true(gpu_hours_freed(job("a", "x", 20, 7200, 0, false)) == 0); // kept its GPU
    JobRecord unknown = job("a", "x", 20, 7200);
    unknown.capacity_bytes = 0; // GPU not in the catalog: nothing claimed
    assert_true(gpu_hours_freed(unknown) == 0);
    assert_true(gpu_hours_freed(job("a", "x", 80, 7200)) == 0);
}

static void groups_add_up_to_the_total(void **)
{
    std::vector<JobRecord> jobs = {job("alice", "phys", 20, 3600), job("bob", "phys", 40, 1800),
                                   job("alice", "chem", 10, 600, 1),
                                   job("carol", "", 30, 900, 0, false)};
    jobs[1].cuda_oom = true;
    jobs[1].exit_status = 1;
    for (GroupBy g : {GroupBy::user, GroupBy::account, GroupBy::partition, GroupBy::gpu}) {
        Options opt;
        opt.by = g;
        Report r = build_report(opt, jobs);
        Totals sum;
        double freed = 0, limits = 0;
        for (const auto &[k, t] : r.groups) {
            sum.jobs += t.jobs;
            sum.packed += t.packed;
            sum.failed += t.failed;
            freed += t.gpu_hours_freed;
            limits += t.limit_bytes;
        }
        assert_int_equal(sum.jobs, 4);
        assert_int_equal(sum.packed, 3);
        assert_int_equal(sum.failed, 2);
        assert_true(std::fabs(freed - r.total.gpu_hours_freed) < 1e-9);
        assert_true(std::fabs(limits - r.total.limit_bytes) < 1);
    }
    Options opt;
    opt.by = GroupBy::account;
    Report r = build_report(opt, jobs);
    assert_int_equal(r.groups.size(), 3); // phys, chem, (unknown)
    assert_int_equal(r.groups["(unknown)"].jobs, 1);
    assert_int_equal(r.total.oom_after_packing, 1);
    // 0.75 x 1 h + 0.5 x 0.5 h + 0.875 x (1/6) h
    assert_true(std::fabs(r.total.gpu_hours_freed - (0.75 + 0.25 + 0.875 / 6)) < 1e-9);
    assert_true(std::fabs(r.total.requested_bytes - 240.0 * k_gib) < 1);
}

static void window_and_accuracy(void **)
{
    std::vector<JobRecord> jobs = {job("a", "x", 20, 100), job("a", "x", 20, 5000)};
    jobs[1].measured_bytes = 21 * k_gib; // estimate 19 GiB: error 2/21
    Options opt;
    opt.since = 86400 + 1000;
    Report r = build_report(opt, jobs);
    assert_int_equal(r.total.jobs, 1);
    assert_int_equal(r.total.measured_jobs, 1);
    assert_true(std::fabs(r.total.mean_abs_error() - 2.0 / 21) < 1e-9);
    assert_int_equal(r.accuracy.size(), 1);
    opt.since.reset();
    opt.until = 86400 + 1000;
    assert_int_equal(build_report(opt, jobs).total.jobs, 1);
    assert_int_equal(build_report(opt, {}).total.jobs, 0);
}

int test_group_grouping(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_hours_freed_is_unused_share_times_hours),
        cmocka_unit_test(groups_add_up_to_the_total),
        cmocka_unit_test(window_and_accuracy),
    };
    return cmocka_run_group_tests_name("grouping", tests, nullptr, nullptr);
}
