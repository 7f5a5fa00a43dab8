// test_held_jobs.cpp — the held jobs' scan (docs/async.md): which squeue lines are marked held
// jobs, what the scan does to each, and the narrowing payload naming the job.
#include "cmocka.hpp"
#include "held_jobs.h"
#include "test-list.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

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

// An ended estimate whose job is never listed (its sbatch was killed) is looked for at
// doubling intervals, not at every sweep until the held deadline.
static void wait_delays(void **)
{
    assert_int_equal(held_wait_delay_ms(1), 250);
    assert_int_equal(held_wait_delay_ms(2), 500);
    assert_int_equal(held_wait_delay_ms(4), 2000);
    assert_int_equal(held_wait_delay_ms(8), 30000);
    assert_int_equal(held_wait_delay_ms(1000), 30000);
    uint64_t total = 0;
    unsigned rounds = 0;
    while (total < 1800 * 1000) // the default held deadline
        total += held_wait_delay_ms(++rounds);
    assert_true(rounds < 70); // where every 250 ms sweep scanned: 7200 squeue calls
}

// The wiring of those delays: a HeldJobs on a real loop, an estimate that ended and whose job
// squeue (a stand-in on PATH that counts its calls and lists nothing) never lists, ticked
// every 5 ms, as xmemd's sweep would be, for 2 s.
static void unlisted_job_backs_off(void **)
{
    char dir[] = "/tmp/xmem-held-XXXXXX";
    assert_non_null(mkdtemp(dir));
    std::string count = std::string(dir) + "/calls", squeue = std::string(dir) + "/squeue";
    std::ofstream(squeue) << "#!/bin/sh\necho x >>" << count << "\n";
    chmod(squeue.c_str(), 0755);
    std::string old_path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
    setenv("PATH", (std::string(dir) + ":" + old_path).c_str(), 1);

    auto config = std::make_shared<const Config>(config_defaults()); // budget 2 s: holds jobs
    uv_loop_t loop;
    uv_loop_init(&loop);
    HeldJobs held(&loop, config);
    held.add(1, 1001);
    held.failed(1, "no estimate");
    uv_timer_t sweep, stop;
    uv_timer_init(&loop, &sweep);
    uv_timer_init(&loop, &stop);
    sweep.data = &held;
    uv_timer_start(
        &sweep, [](uv_timer_t *t) { static_cast<HeldJobs *>(t->data)->tick(); }, 0, 5);
    stop.data = &sweep;
    uv_timer_start(
        &stop,
        [](uv_timer_t *t) {
            uv_timer_stop(static_cast<uv_timer_t *>(t->data));
            uv_close(reinterpret_cast<uv_handle_t *>(t->data), nullptr);
            uv_close(reinterpret_cast<uv_handle_t *>(t), nullptr);
        },
        2000, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    setenv("PATH", old_path.c_str(), 1);

    std::ifstream in(count);
    int calls = 0;
    for (std::string line; std::getline(in, line);)
        calls++;
    unlink(count.c_str());
    unlink(squeue.c_str());
    rmdir(dir);
    // The start scan, then 250, 500 and 1000 ms later: 4 or 5 in 2 s (a scan takes some ms).
    // Without the delays every tick after a scan started another: hundreds.
    assert_true(calls >= 3);
    assert_true(calls <= 6);
}

int test_group_held_jobs(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(listing),
        cmocka_unit_test(actions),
        cmocka_unit_test(payload_names_job),
        cmocka_unit_test(wait_delays),
        cmocka_unit_test(unlisted_job_backs_off),
    };
    return cmocka_run_group_tests_name("held_jobs", tests, nullptr, nullptr);
}
