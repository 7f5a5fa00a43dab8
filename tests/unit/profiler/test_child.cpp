// run_child: status pipe, timeouts, exit classification, stderr tail. Uses /bin/sh children.
#include "child.h"
#include "test-list.h"

using namespace xmem::profile;

namespace
{
ChildResult run_sh(const char *script, int timeout_s = 10, int budget_s = 20)
{
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.timeout_s = timeout_s;
    spec.budget_s = budget_s;
    spec.env = {{"XMEM_TEST_VALUE", "42"}};
    return run_child(spec);
}
} // namespace

static void done_after_steps(void **state)
{
    ChildResult r = run_sh("printf 'step 1\\nstep 2\\ndone\\n' >&$XMEM_STATUS_FD; exit 0");
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::done));
    assert_int_equal(r.steps, 2);
    assert_int_equal(r.exit_code, 0);
}

static void environment_reaches_the_child(void **state)
{
    ChildResult r = run_sh("test \"$XMEM_TEST_VALUE\" = 42 && printf 'done\\n' >&$XMEM_STATUS_FD");
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::done));
}

static void no_step_times_out(void **state)
{
    ChildResult r = run_sh("sleep 30", 1, 1);
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::timed_out));
    assert_true(r.budget_spent);
    assert_true(r.seconds < 6); // 1 s budget + SIGTERM grace, not the 30 s sleep
}

// Set-up before the first step (an evaluation pass, a data warm-up) is bounded by the whole
// run's budget, not cut by the per-step timeout.
static void slow_setup_is_not_a_slow_step(void **state)
{
    ChildResult r =
        run_sh("sleep 1.5; echo step 1 >&$XMEM_STATUS_FD; echo done >&$XMEM_STATUS_FD", 1, 10);
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::done));
}

// Steps that each come in time still end at the budget, which says so.
static void budget_bounds_the_whole_run(void **state)
{
    ChildResult r = run_sh("for i in 1 2 3 4 5 6 7 8; do sleep 0.5; echo step $i >&$XMEM_STATUS_FD;"
                           " done; echo done >&$XMEM_STATUS_FD",
                           1, 2);
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::timed_out));
    assert_true(r.budget_spent);
    assert_true(r.steps >= 2 && r.steps < 8);
}

static void progress_resets_the_timeout(void **state)
{
    ChildResult r = run_sh("for i in 1 2 3; do sleep 0.6; echo step $i >&$XMEM_STATUS_FD; done;"
                           " echo done >&$XMEM_STATUS_FD",
                           1);
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::done));
    assert_int_equal(r.steps, 3);
}

// A first-use build of the capture library does not count against the step timeout.
static void build_pauses_the_timeout(void **state)
{
    ChildResult r =
        run_sh("echo 'build xmem: building' >&$XMEM_STATUS_FD; sleep 1.5;"
               " echo built >&$XMEM_STATUS_FD; sleep 0.5; echo step 1 >&$XMEM_STATUS_FD;"
               " echo done >&$XMEM_STATUS_FD",
               1);
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::done));
    assert_int_equal(r.steps, 1);
    assert_false(r.building);
}

static void crash_keeps_the_stderr_tail(void **state)
{
    ChildResult r =
        run_sh("echo step 1 >&$XMEM_STATUS_FD; for i in $(seq 1 50); do echo line $i >&2; done;"
               " echo 'ValueError: boom' >&2; exit 3");
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::failed));
    assert_int_equal(r.exit_code, 3);
    assert_int_equal(r.steps, 1);
    std::string tail = tail_lines(r.stderr_tail, 2, "| ");
    assert_string_equal(tail.c_str(), "| line 50\n| ValueError: boom\n");
}

static void exit_without_done_and_shim_failure(void **state)
{
    ChildResult r = run_sh("exit 0");
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::exited));
    r = run_sh("echo 'fail xmem: cannot load the capture library' >&$XMEM_STATUS_FD; exit 1");
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::shim_failed));
    assert_string_equal(r.message.c_str(), "xmem: cannot load the capture library");
    assert_int_equal(r.give_up_exit, XMEM_PROFILE_EXIT_FAILED);
}

// Typed lines (contract/profile_status.h): a giving-up line names its exit; a limit line
// leaves the job to fail its own way and names the launcher's exit.
static void typed_status_lines(void **state)
{
    ChildResult r = run_sh("echo 'environment xmem: no torch' >&$XMEM_STATUS_FD; exit 4");
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::shim_failed));
    assert_string_equal(r.message.c_str(), "xmem: no torch");
    assert_int_equal(r.give_up_exit, XMEM_PROFILE_EXIT_ENVIRONMENT);
    r = run_sh("echo 'unsupported xmem: fast mode: unsupported: x' >&$XMEM_STATUS_FD; exit 3");
    assert_int_equal(r.give_up_exit, XMEM_PROFILE_EXIT_UNSUPPORTED);
    assert_string_equal(r.message.c_str(), "xmem: fast mode: unsupported: x");
    r = run_sh("echo 'memory-limit MemoryError' >&$XMEM_STATUS_FD; exit 1");
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::failed));
    assert_int_equal(r.limit_exit, XMEM_PROFILE_EXIT_NO_MEMORY);
    r = run_sh("echo 'process-limit BlockingIOError' >&$XMEM_STATUS_FD; exit 1");
    assert_int_equal(r.limit_exit, XMEM_PROFILE_EXIT_NO_PROCESSES);
    r = run_sh("echo MemoryError >&2; exit 1"); // stderr is never read
    assert_int_equal(r.limit_exit, 0);
}

static void missing_program(void **state)
{
    ChildSpec spec;
    spec.argv = {"/nonexistent/python3", "train.py"};
    ChildResult r = run_child(spec);
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::shim_failed));
    assert_int_equal(r.exit_code, 127);
    assert_string_equal(
        r.message.c_str(),
        "xmem: /nonexistent/python3: No such file or directory (is it installed? see --python)");
}

static void leftover_children_do_not_hold_us(void **state)
{
    // A background child keeps both pipes open (like a DataLoader worker) after the script exits.
    ChildResult r = run_sh("(sleep 20 &) ; echo done >&$XMEM_STATUS_FD; exit 0");
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ChildEnd::done));
    assert_true(r.seconds < 5);
}

int xmem_test_group_child(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(done_after_steps),
        cmocka_unit_test(environment_reaches_the_child),
        cmocka_unit_test(no_step_times_out),
        cmocka_unit_test(slow_setup_is_not_a_slow_step),
        cmocka_unit_test(budget_bounds_the_whole_run),
        cmocka_unit_test(progress_resets_the_timeout),
        cmocka_unit_test(build_pauses_the_timeout),
        cmocka_unit_test(crash_keeps_the_stderr_tail),
        cmocka_unit_test(exit_without_done_and_shim_failure),
        cmocka_unit_test(typed_status_lines),
        cmocka_unit_test(missing_program),
        cmocka_unit_test(leftover_children_do_not_hold_us),
    };
    return cmocka_run_group_tests_name("child", tests, nullptr, nullptr);
}
