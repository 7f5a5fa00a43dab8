// test_held_jobs.cpp — the held jobs' scan (docs/async.md): which squeue lines are marked held
// jobs, what the scan does to each, and the narrowing payload naming the job.
#include "cmocka.hpp"
#include "held_jobs.h"
#include "test-list.h"

using namespace xmem::server;

static void listing(void **)
{
    auto jobs = held_parse_listing(
        "12/xmem: estimating id=7 uid=1001 gres=gpu:1 held=shard:10 script=a dir=b env=c "
        "envnames=P\n"
        "13/xmem: estimate=1843M limit=2048M policy=shard request=gres:gpu:1->shard:1\n"
        "14/\n"
        "15_2/xmem: estimating id=8 uid=1001 gres=gpu:1\n"
        "16/xmem: estimating id=9 uid=0 gres=gpu:1 held=mps:100 script=a dir=b env=c envnames=P");
    assert_int_equal(jobs.size(), 2);
    assert_int_equal(jobs[0].job_id, 12);
    assert_int_equal(jobs[0].request_id, 7);
    assert_int_equal(jobs[0].uid, 1001);
    assert_int_equal(jobs[1].job_id, 16);
    assert_int_equal(jobs[1].request_id, 9);
    assert_int_equal(jobs[1].uid, 0);
}

static void actions(void **)
{
    Config cfg = config_defaults();
    std::map<uint64_t, HeldEntry> book;
    book[7].uid = 1001; // estimating
    book[8].uid = 1001; // failed
    book[8].finished = true;
    book[8].why = "no estimate (profile_failed): boom";
    MarkedJob job{12, 7, 1001};
    assert_string_equal(held_action(job, book, cfg, false).c_str(), ""); // waits on
    job.request_id = 8;
    assert_string_equal(held_action(job, book, cfg, false).c_str(),
                        "xmem-release no estimate (profile_failed): boom");
    job.uid = 1002; // a mark naming another user's estimate
    assert_true(held_action(job, book, cfg, false)
                    .rfind("xmem-release the estimate it names is "
                           "another user's",
                           0) == 0);
    job.request_id = 99; // unknown: released by the first scan only
    assert_string_equal(held_action(job, book, cfg, false).c_str(), "");
    assert_true(held_action(job, book, cfg, true).rfind("xmem-release xmemd restarted", 0) == 0);
}

static void payload_names_job(void **)
{
    Decision d{1001, 42, 1, 2, "A100-40GB", "a", "b", "gpu:1", "c", 5};
    std::string base = decision_payload(d);
    d.job_id = 77;
    assert_string_equal(decision_payload(d).c_str(), (base + " job=77").c_str());
    d.ranks = 4; // profiled as 4 ranks: said, before the job
    assert_string_equal(decision_payload(d).c_str(), (base + " ranks=4 job=77").c_str());
}

int test_group_held_jobs(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(listing),
        cmocka_unit_test(actions),
        cmocka_unit_test(payload_names_job),
    };
    return cmocka_run_group_tests_name("held_jobs", tests, nullptr, nullptr);
}
