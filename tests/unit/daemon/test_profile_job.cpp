// test_profile_job.cpp — profiles as Slurm jobs (profile_job.h): the srun line xmemd hands
// the estimator, and srun's endings read back into the outcomes a local profile gets.
#include "cmocka.hpp"
#include "profile_job.h"
#include "test-list.h"
#include "verdict.h"

#include <csignal>
#include <cstdlib>

using namespace xmem::server;

static ProfileJobSite site(bool fast = false)
{
    return ProfileJobSite{"cpu", fast, "/usr/bin/srun"};
}

static SandboxLimits limits()
{
    return SandboxLimits{4096, 5, 256, 1, 10, 0, 64};
}

// Slurm counts time limits in minutes and may end a job up to half a minute early: the job's
// is a minute more than covers the sandbox's wall time.
static void launcher_covers_the_wall_time(void **)
{
    assert_string_equal(profile_job_launcher(site(), 90000, 7).c_str(),
                        "/usr/bin/srun --partition=cpu --time=3 --nodes=1 --ntasks=1 "
                        "--job-name=xmem-profile-7 --quiet --propagate=ALL --export=ALL --");
    assert_contains(profile_job_launcher(site(), 1, 7), " --time=2 ");
    assert_contains(profile_job_launcher(site(), 60000, 7), " --time=2 ");
    assert_contains(profile_job_launcher(site(), 60001, 7), " --time=3 ");
    assert_contains(profile_job_launcher(site(), 600000, 7), " --time=11 ");
}

// Off without a partition; fast mode goes to the job only when the site says so.
static void options_follow_the_site(void **)
{
    assert_true(profile_job_options(ProfileJobSite{"", true, "/usr/bin/srun"}, 1000, 1).empty());
    auto exact = profile_job_options(site(), 1000, 1);
    assert_int_equal(exact.size(), 2);
    assert_string_equal(exact[0].c_str(), "--exact-launcher");
    auto both = profile_job_options(site(true), 1000, 1);
    assert_int_equal(both.size(), 4);
    assert_string_equal(both[2].c_str(), "--fast-launcher");
    assert_string_equal(both[3].c_str(), both[1].c_str());
}

static SandboxRun ended(int status, const std::string &err = "")
{
    SandboxRun r;
    r.spawned = true;
    r.exit_status = status;
    r.err = err;
    return r;
}

static Outcome outcome_of(SandboxRun r, const std::string &state)
{
    profile_job_reading(r, state);
    return profile_verdict(r, limits()).outcome;
}

// A time limit, a cancel, a failure and a limit met on the node end as they would locally:
// srun's status is 128+N for a task ended by signal N (SIGTERM when Slurm ends or cancels it).
static void endings_map_to_local_outcomes(void **)
{
    assert_int_equal((int)outcome_of(ended(128 + SIGTERM), "TIMEOUT"),
                     (int)Outcome::profile_timeout);
    assert_int_equal((int)outcome_of(ended(128 + SIGTERM), "DEADLINE"),
                     (int)Outcome::profile_timeout);
    assert_int_equal((int)outcome_of(ended(128 + SIGTERM), "CANCELLED"),
                     (int)Outcome::profile_failed);
    assert_int_equal((int)outcome_of(ended(1, "Traceback: ValueError\n"), "FAILED"),
                     (int)Outcome::profile_failed);
    assert_int_equal((int)outcome_of(ended(1), ""), (int)Outcome::profile_failed);
    assert_int_equal((int)outcome_of(ended(128 + SIGXCPU), "FAILED"),
                     (int)Outcome::profile_cpu_limit);
    assert_int_equal((int)outcome_of(ended(128 + SIGXFSZ), "FAILED"),
                     (int)Outcome::profile_file_limit);
    assert_int_equal((int)outcome_of(ended(6), "FAILED"), (int)Outcome::profile_memory_limit);
    assert_int_equal((int)outcome_of(ended(7), "FAILED"), (int)Outcome::profile_process_limit);
}

// Only a run that srun did not see to its end can leave a job behind; scancel then names it
// by its name and the user, so it cannot reach another user's job.
static void cancels_what_it_left(void **)
{
    SandboxRun r = ended(0, "");
    assert_false(profile_job_left_behind(r));
    r.wall_expired = true;
    assert_true(profile_job_left_behind(r));
    r = ended(-1, "");
    r.term_signal = SIGKILL;
    assert_true(profile_job_left_behind(r));
    auto argv = profile_job_scancel_argv(site(), 12, 1001);
    assert_int_equal(argv.size(), 4);
    assert_string_equal(argv[0].c_str(), "/usr/bin/scancel");
    assert_string_equal(argv[2].c_str(), "--name=xmem-profile-12");
    assert_string_equal(argv[3].c_str(), "--user=1001");
    auto state = profile_job_squeue_argv(site(), 12, 1001);
    assert_string_equal(state[0].c_str(), "/usr/bin/squeue");
    assert_contains(state[3], "--name=xmem-profile-12");
    assert_contains(state[4], "--user=1001");
}

// Off, nothing changes: no variable added, a failed run left as it is, no Slurm command run.
static void off_changes_nothing(void **)
{
    ProfileJobSite off{"", false, "/nonexistent/srun"};
    setenv("SLURM_CONF", "/etc/slurm/site.conf", 1);
    std::vector<std::string> env;
    profile_job_environment(off, env);
    assert_true(env.empty());
    profile_job_environment(site(), env);
    assert_int_equal(env.size(), 1);
    assert_string_equal(env[0].c_str(), "SLURM_CONF=/etc/slurm/site.conf");
    SandboxRun r = ended(128 + SIGTERM);
    profile_job_settle(off, 1, 1001, r);
    assert_false(r.wall_expired);
    assert_int_equal(r.exit_status, 128 + SIGTERM);
}

int test_group_profile_job(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launcher_covers_the_wall_time), cmocka_unit_test(options_follow_the_site),
        cmocka_unit_test(endings_map_to_local_outcomes), cmocka_unit_test(cancels_what_it_left),
        cmocka_unit_test(off_changes_nothing)};
    return cmocka_run_group_tests_name("profile_job", tests, nullptr, nullptr);
}
