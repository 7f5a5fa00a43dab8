// test_sacct.cpp — the accounting record's round trip, sacct's answer read back into the
// same job records the ledger gives, and GPU-hours by the part of a GPU granted.
#include "cmocka.hpp"
#include "accounting_record.h"
#include "report.h"
#include "test-list.h"

#include <cmath>

using namespace xmem::report;
using xmem::server::AccountingRecord;

static const uint64_t k_gib = 1ull << 30;

static AccountingRecord packed_record()
{
    AccountingRecord r;
    r.ts = 1764900000;
    r.request_id = 42;
    r.gpu = "A100-40GB";
    r.estimate_bytes = 9 * k_gib;
    r.limit_bytes = 10 * k_gib;
    r.estimated = true;
    r.share = "shard:3";
    r.gpu_fraction = 0.3;
    r.measured_bytes = 8 * k_gib;
    r.cuda_oom = true;
    r.exit_status = 1;
    r.elapsed_seconds = 7200;
    r.enforcement = "client";
    return r;
}

static uint64_t forty(const std::string &gpu)
{
    return gpu == "A100-40GB" ? 40 * k_gib : 0;
}

static void record_round_trip(void **)
{
    std::string json = xmem::server::accounting_record_json(packed_record());
    assert_true(json.find(' ') == std::string::npos && json.find(';') == std::string::npos);
    auto back = xmem::server::accounting_record_find("xmem: estimate=9G; xmem-acct: " + json);
    assert_true(back.has_value());
    assert_int_equal(back->ts, 1764900000);
    assert_true(back->share == std::string("shard:3") &&
                std::fabs(*back->gpu_fraction - 0.3) < 1e-12);
    assert_true(*back->limit_bytes == 10 * k_gib && *back->measured_bytes == 8 * k_gib);
    assert_true(back->cuda_oom && !back->oom_requeued && back->exit_status == 1);
    assert_true(*back->enforcement == "client");
    // The last record wins (a rerun's); a brace inside a string does not end it.
    AccountingRecord braced = packed_record();
    braced.gpu = "odd}gpu";
    std::string two =
        "xmem-acct: " + json + "; xmem-acct: " + xmem::server::accounting_record_json(braced);
    assert_true(xmem::server::accounting_record_find(two)->gpu == "odd}gpu");
}

static void malformed_records_are_skipped(void **)
{
    const char *bad[] = {
        "",
        "xmem: estimate=1M",
        "xmem-acct: {",
        "xmem-acct: {\"v\":2,\"ts\":1,\"exit\":0,\"el\":1,\"ok\":1,\"check\":0,\"oom\":0,\"rq\":0}",
        "xmem-acct: "
        "{\"v\":1,\"ts\":-1,\"exit\":0,\"el\":1,\"ok\":1,\"check\":0,\"oom\":0,\"rq\":0}",
        "xmem-acct: {\"v\":1,\"ts\":1,\"exit\":0,\"el\":1,\"ok\":2,\"check\":0,\"oom\":0,\"rq\":0}",
        "xmem-acct: {\"v\":1,\"ts\":1,\"exit\":0,\"el\":1,\"ok\":1,\"check\":0,\"oom\":0,\"rq\":0,"
        "\"frac\":1.5}",
        "xmem-acct: {\"v\":1,\"ts\":1,\"exit\":0,\"el\":\"1\",\"ok\":1,\"check\":0,\"oom\":0,"
        "\"rq\":0}",
        "xmem-acct: {\"v\":1,\"exit\":0,\"el\":1,\"ok\":1,\"check\":0,\"oom\":0,\"rq\":0}",
    };
    for (const char *c : bad)
        if (xmem::server::accounting_record_find(c))
            fail_msg("accepted: %s", c);
}

static void sacct_lines_become_job_records(void **)
{
    std::string json = xmem::server::accounting_record_json(packed_record());
    AccountingRecord whole = packed_record();
    whole.share.reset();
    whole.gpu_fraction.reset();
    whole.estimated = false; // not packed: a whole GPU
    std::string out =
        "17|alice|physics|gpu|xmem: estimate=9G|x; xmem-acct: " + json + "\n" +
        "18|bob|chem|gpu|\n" +                   // not an --xmem job
        "19|bob|chem|debug|xmem-acct: {nope\n" + // no record
        "20|carol|chem|gpu|xmem-acct: " + xmem::server::accounting_record_json(whole) + "\n" +
        "garbage\n";
    auto jobs = parse_sacct(out, forty);
    assert_int_equal(jobs.size(), 2);
    const JobRecord &a = jobs[0];
    assert_int_equal(a.job_id, 17);
    assert_true(a.user == "alice" && a.account == "physics" && a.partition == "gpu");
    assert_true(a.packed && a.capacity_bytes == 40 * k_gib && a.limit_bytes == 10 * k_gib);
    assert_true(a.cuda_oom && a.exit_status == 1 && a.enforcement == "client");
    // 0.3 of a GPU for 2 h; 40 GiB asked, 12 GiB granted: 28 GiB for 2 h saved.
    assert_true(std::fabs(gpu_hours(a) - 0.6) < 1e-9);
    assert_true(std::fabs(memory_gib_hours_saved(a) - 56.0) < 1e-9);
    const JobRecord &c = jobs[1];
    assert_true(!c.packed && !c.gpu_fraction);
    assert_true(std::fabs(gpu_hours(c) - 2.0) < 1e-9); // a whole GPU
    assert_true(memory_gib_hours_saved(c) == 0);
    Options opt;
    Report r = build_report(opt, jobs);
    assert_true(std::fabs(r.total.gpu_hours - 2.6) < 1e-9);
    assert_true(std::fabs(r.total.memory_gib_hours_saved - 56.0) < 1e-9);
    assert_true(render_csv(r).find(",gpu_hours,memory_gib_hours_saved") != std::string::npos);
}

static void source_option(void **)
{
    Options opt;
    const char *ok[] = {"xmem-report", "--source", "sacct", "--sacct", "/opt/slurm/bin/sacct"};
    assert_true(parse_args(5, const_cast<char **>(ok), opt).ok());
    assert_true(opt.source == Source::sacct && opt.sacct == "/opt/slurm/bin/sacct");
    Options bad;
    const char *no[] = {"xmem-report", "--source=slurm"};
    auto r = parse_args(2, const_cast<char **>(no), bad);
    assert_false(r.ok());
    assert_true(r.error().message == "xmem: report: unknown source 'slurm' (use ledger or sacct)");
}

int test_group_sacct(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(record_round_trip),
        cmocka_unit_test(malformed_records_are_skipped),
        cmocka_unit_test(sacct_lines_become_job_records),
        cmocka_unit_test(source_option),
    };
    return cmocka_run_group_tests_name("sacct", tests, nullptr, nullptr);
}
