// test-whatif.cpp — `xmem report --what-if`: the changes read by xmemd's own policy parser
// (and refused with one line naming the change and the fix), the OOM rule, the sums of each
// column, and share() of etc/xmem_lib.lua run by lua5.1 on hand-computed shares.
#include "cmocka.hpp"
#include "test-list.h"
#include "whatif.h"

using namespace xmem::report;

static void changes_are_read_as_the_config_reads_them(void **)
{
    auto c = parse_changes("mode=mps,margin_percent=20%,whole_gpu_above_percent=100");
    assert_true(c.ok());
    assert_int_equal(c.value().size(), 3);
    assert_string_equal(c.value()[1].value.c_str(), "20"); // the % the key already says
    xmem::server::Policy p = apply_changes(xmem::server::Policy{}, c.value());
    assert_string_equal(p.mode.c_str(), "mps");
    assert_int_equal(p.margin_percent, 20);
    assert_int_equal(p.whole_gpu_above_percent, 100);
    auto level = parse_changes("require_enforcement=dmem");
    assert_true(level.ok());
    assert_int_equal(apply_changes(xmem::server::Policy{}, level.value()).require_enforcement,
                     XMEM_ENFORCE_DMEM);
}

static void bad_changes_are_one_line_with_the_fix(void **)
{
    struct {
        const char *text, *says;
    } bad[] = {
        {"policy=mps", "--what-if policy=mps: unknown change 'policy' (use mode, margin_percent"},
        {"margin_percent=150", "out of range: 150; use a value from 0 to 100"},
        {"margin_percent=-1", "out of range: -1; use a value from 0 to 100"},
        {"margin_percent=ten", "invalid integer: ten"},
        {"mode=half", "invalid value: half; use shard, mps or whole"},
        {"whole_gpu_above_percent=0", "use a value from 1 to 100"},
        {"require_enforcement=strong", "use none, client, mps-server or dmem"},
        {"mode", "--what-if mode: expected KEY=VALUE"},
        {"mode=", "expected KEY=VALUE"},
        {"", "expected KEY=VALUE"},
        {"mode=mps,", "expected KEY=VALUE"},
        {"mode=mps,mode=whole", "'mode' given twice"},
        {"default=x", "unknown change 'default'"},
    };
    for (const auto &b : bad) {
        auto c = parse_changes(b.text);
        assert_false(c.ok());
        const std::string &line = c.error().message;
        assert_contains(line.c_str(), "xmem: report: --what-if ");
        assert_contains(line.c_str(), b.says);
        assert_true(line.find('\n') == std::string::npos);
    }
    // Through the report's options: the same line, before anything is read.
    Options opt;
    const char *argv[] = {"xmem-report", "--what-if", "margin_percent=101"};
    auto r = parse_args(3, (char **)argv, opt);
    assert_false(r.ok());
    assert_contains(r.error().message.c_str(),
                    "--what-if margin_percent=101: policy.margin_percent");
}

static void oom_is_a_peak_above_the_limit_on_a_share(void **)
{
    assert_true(would_oom(Pair{4000, 4001, false}, true));
    assert_false(would_oom(Pair{4000, 4000, false}, true));  // exactly the limit fits
    assert_false(would_oom(Pair{4000, 9000, false}, false)); // a whole GPU holds it to nothing
    assert_true(would_oom(Pair{4000, 0, true}, true));       // ran out on a share already
    assert_false(would_oom(Pair{4000, 0, true}, false));
}

static JobRecord job(uint64_t id, uint64_t limit_mib, std::optional<uint64_t> peak_mib,
                     uint64_t seconds, std::optional<double> fraction)
{
    JobRecord j;
    j.ts = 1000 + (int64_t)id;
    j.job_id = id;
    j.user = "u";
    j.gpu = "A100-40GB";
    j.capacity_bytes = 40536ull << 20;
    j.limit_bytes = limit_mib << 20;
    j.estimate_bytes = j.limit_bytes;
    if (peak_mib)
        j.measured_bytes = *peak_mib << 20;
    j.eligible = true;
    j.packed = true;
    j.elapsed_seconds = seconds;
    j.gpu_fraction = fraction;
    return j;
}

static Share shard(int count)
{
    Share s;
    s.kind = "shard";
    s.count = count;
    s.per_gpu = 10;
    s.packed = true;
    return s;
}

static void columns_sum_as_computed_by_hand(void **)
{
    std::vector<JobRecord> jobs = {
        job(1, 2000, 1800, 7200, 0.1),            // fits
        job(2, 4000, 4100, 3600, 0.2),            // above its limit: OOM wherever packed
        job(3, 30000, 20000, 3600, std::nullopt), // kept its whole GPU
        job(4, 3000, std::nullopt, 3600, 0.1),    // OOM on its share: censored
        job(5, 1000, std::nullopt, 3600, 0.1),    // no peak: skipped
    };
    jobs[2].packed = true; // the report's packed: limit below the GPU (no share recorded)
    jobs[3].cuda_oom = true;
    jobs[4].measured_bytes.reset();
    // The shares each policy gives jobs 1-4, as share() would (checked against Lua below).
    ShareFn fake = [](const xmem::server::Policy &p, const std::vector<ShareQuery> &q) {
        assert_int_equal(q.size(), 4);
        assert_int_equal(q[1].limit_mb, 4000);
        bool now = p.whole_gpu_above_percent == 90;
        std::vector<Share> s = {shard(1), shard(2), now ? Share{} : shard(9), shard(1)};
        return xmem::Result<std::vector<Share>>::ok(s);
    };
    xmem::server::Policy current;
    auto changes = parse_changes("whole_gpu_above_percent=100");
    auto w = build_what_if(jobs, Options{}, current, changes.value(), fake);
    assert_true(w.ok());
    const WhatIf &r = w.value();
    assert_int_equal(r.jobs.size(), 4);
    assert_int_equal(r.skipped.at(Skip::no_measured_peak), 1);
    // Actual: 1, 2, 4 on shares (job 3 has no share where the others have one); 4 ran out.
    // Freed: 0.9 x 2 h + 0.8 x 1 h = 2.6.
    assert_int_equal(r.actual.packed, 3);
    assert_int_equal(r.actual.oom, 1);
    assert_float_equal(r.actual.gpu_hours_freed, 2.6, 1e-9);
    // In force: 1, 2, 4 packed; 2 (4100 > 4000) and 4 out of memory; freed 0.9 x 2 = 1.8.
    assert_int_equal(r.current.packed, 3);
    assert_int_equal(r.current.oom, 2);
    assert_float_equal(r.current.gpu_hours_freed, 1.8, 1e-9);
    // Changed: job 3 packs too, on shard:9, and fits (20000 <= 30000): 1.8 + 0.1 x 1 = 1.9.
    assert_int_equal(r.what_if.packed, 4);
    assert_int_equal(r.what_if.oom, 2);
    assert_float_equal(r.what_if.gpu_hours_freed, 1.9, 1e-9);
    // A --xmem=check job keeps its GPU under any policy.
    jobs[0].eligible = false;
    auto check = build_what_if(jobs, Options{}, current, changes.value(), fake);
    assert_false(check.value().jobs[0].what_if.share.packed);
    assert_int_equal(check.value().what_if.packed, 3);
}

// share() itself, from the source tree's etc/xmem_lib.lua (beside etc/xmem.yaml), on an
// A100-40GB of 40536 MiB in 10 shards: per shard 4053.6 MiB.
static void lua_share_gives_the_controllers_shares(void **)
{
    xmem::server::Policy p;
    p.default_target.memory_mib = 40536;
    ShareFn shares = lua_shares(XMEM_SRC "/etc/xmem.yaml");
    std::vector<ShareQuery> q = {{1871, "", ""}, {7000, "", ""}, {36000, "", ""}};
    auto got = shares(p, q);
    if (!got.ok())
        fail_msg("%s", got.error().message.c_str());
    // 1871 + 10% = 2058.1 -> 2059 MiB: shard:1 (docs/slurm.md's example).
    assert_string_equal(got.value()[0].kind.c_str(), "shard");
    assert_int_equal(got.value()[0].share_mb, 2059);
    assert_int_equal(got.value()[0].count, 1);
    assert_int_equal(got.value()[0].per_gpu, 10);
    assert_true(got.value()[0].packed);
    // 7700 / 4053.6 = 1.9: shard:2. 39600 > 90% of 40536: whole.
    assert_int_equal(got.value()[1].count, 2);
    assert_false(got.value()[2].packed);
    assert_string_equal(got.value()[2].kind.c_str(), "whole");
    // mps: ceil(7700 x 100 / 40536) = 19.
    p.mode = "mps";
    got = shares(p, q);
    assert_string_equal(got.value()[1].kind.c_str(), "mps");
    assert_int_equal(got.value()[1].count, 19);
    assert_int_equal(got.value()[1].per_gpu, 100);
    // Below the required level a share is no packing.
    p.mode = "shard";
    p.require_enforcement = XMEM_ENFORCE_DMEM;
    got = shares(p, q);
    assert_int_equal(got.value()[1].count, 2);
    assert_false(got.value()[1].packed);
    assert_float_equal(share_part(shard(3)), 0.3, 1e-12);
    assert_float_equal(share_part(Share{}), 1.0, 1e-12);
}

int test_group_whatif(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(changes_are_read_as_the_config_reads_them),
        cmocka_unit_test(bad_changes_are_one_line_with_the_fix),
        cmocka_unit_test(oom_is_a_peak_above_the_limit_on_a_share),
        cmocka_unit_test(columns_sum_as_computed_by_hand),
        cmocka_unit_test(lua_share_gives_the_controllers_shares),
    };
    return cmocka_run_group_tests_name("whatif", tests, nullptr, nullptr);
}
