// test-scheduler.cpp — global and per-user slots, the bounded queue, fairness.
#include "cmocka.hpp"
#include "scheduler.h"
#include "test-list.h"

using namespace xmem::server;

static EstimateJob *J(int i)
{
    return reinterpret_cast<EstimateJob *>((uintptr_t)(i * 16));
}

static void limits_and_queue(void **)
{
    Scheduler s;
    s.configure(2, 1, 2);
    assert_int_equal((int)s.submit(J(1), 100), (int)Scheduler::Admit::start_now);
    assert_int_equal((int)s.submit(J(2), 100), (int)Scheduler::Admit::queued); // per-user
    assert_int_equal((int)s.submit(J(3), 200), (int)Scheduler::Admit::start_now);
    assert_int_equal((int)s.submit(J(4), 300), (int)Scheduler::Admit::queued); // global
    assert_int_equal((int)s.submit(J(5), 300), (int)Scheduler::Admit::full);   // queue full
    assert_int_equal(s.running(), 2);
    assert_int_equal(s.queued(), 2);
    // uid 200 finishes: uid 100 is still at its limit, so uid 300 goes first (no HOL block).
    auto next = s.finish(200);
    assert_int_equal(next.size(), 1);
    assert_ptr_equal(next[0], J(4));
    next = s.finish(100);
    assert_int_equal(next.size(), 1);
    assert_ptr_equal(next[0], J(2));
    assert_int_equal(s.queued(), 0);
}

static void remove_and_take(void **)
{
    Scheduler s;
    s.configure(1, 1, 5);
    s.submit(J(1), 1);
    s.submit(J(2), 2);
    s.submit(J(3), 3);
    assert_true(s.remove(J(2)));
    assert_false(s.remove(J(2)));
    auto q = s.take_queue();
    assert_int_equal(q.size(), 1);
    assert_ptr_equal(q[0], J(3));
}

static void raised_limits_pump(void **)
{
    Scheduler s;
    s.configure(1, 1, 5);
    s.submit(J(1), 1);
    s.submit(J(2), 2);
    s.configure(2, 1, 5);
    auto started = s.pump();
    assert_int_equal(started.size(), 1);
    assert_int_equal(s.running(), 2);
}

static void zero_queue_is_immediate_busy(void **)
{
    Scheduler s;
    s.configure(1, 1, 0);
    s.submit(J(1), 1);
    assert_int_equal((int)s.submit(J(2), 2), (int)Scheduler::Admit::full);
}

int test_group_scheduler(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_and_queue), cmocka_unit_test(remove_and_take),
        cmocka_unit_test(raised_limits_pump), cmocka_unit_test(zero_queue_is_immediate_busy)};
    return cmocka_run_group_tests_name("scheduler", tests, nullptr, nullptr);
}
