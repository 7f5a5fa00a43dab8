// test-scheduler.cpp — global and per-user slots, the bounded queue, fairness.
#include "cmocka.hpp"
#include "scheduler.h"
#include "test-list.h"

using namespace xmem::server;

static EstimateJob *J(int i)
{
    return reinterpret_cast<EstimateJob *>((uintptr_t)(i * 16));
}

// Submits with no eviction expected.
static Scheduler::Admit submit(Scheduler &s, EstimateJob *job, uid_t uid)
{
    EstimateJob *evicted = J(99);
    Scheduler::Admit a = s.submit(job, uid, &evicted);
    assert_null(evicted);
    return a;
}

static void limits_and_queue(void **)
{
    Scheduler s;
    s.configure(2, 1, 2);
    assert_int_equal((int)submit(s, J(1), 100), (int)Scheduler::Admit::start_now);
    assert_int_equal((int)submit(s, J(2), 100), (int)Scheduler::Admit::queued); // per-user
    assert_int_equal((int)submit(s, J(3), 200), (int)Scheduler::Admit::start_now);
    assert_int_equal((int)submit(s, J(4), 300), (int)Scheduler::Admit::queued); // global
    assert_int_equal((int)submit(s, J(5), 300), (int)Scheduler::Admit::full);   // queue full
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
    submit(s, J(1), 1);
    submit(s, J(2), 2);
    submit(s, J(3), 3);
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
    submit(s, J(1), 1);
    submit(s, J(2), 2);
    s.configure(2, 1, 5);
    auto started = s.pump();
    assert_int_equal(started.size(), 1);
    assert_int_equal(s.running(), 2);
}

static void zero_queue_is_immediate_busy(void **)
{
    Scheduler s;
    s.configure(1, 1, 0);
    submit(s, J(1), 1);
    assert_int_equal((int)submit(s, J(2), 2), (int)Scheduler::Admit::full);
}

// One user fills the queue: the next user still queues, taking the place of the first user's
// newest estimate, and is refused only once nobody holds more than one queued more than them.
static void full_queue_is_shared(void **)
{
    Scheduler s;
    s.configure(1, 1, 4);
    submit(s, J(1), 100); // runs
    for (int i = 2; i <= 5; ++i)
        submit(s, J(i), 100); // queued: 2 3 4 5
    assert_int_equal((int)submit(s, J(6), 100), (int)Scheduler::Admit::full);
    EstimateJob *evicted = nullptr;
    assert_int_equal((int)s.submit(J(7), 200, &evicted), (int)Scheduler::Admit::queued);
    assert_ptr_equal(evicted, J(5)); // the hog's newest
    assert_int_equal((int)s.submit(J(8), 200, &evicted), (int)Scheduler::Admit::queued);
    assert_ptr_equal(evicted, J(4));
    // 100 holds 2 3, 200 holds 7 8: equal shares, so a third from 200 is refused.
    assert_int_equal((int)submit(s, J(9), 200), (int)Scheduler::Admit::full);
    assert_int_equal((int)s.submit(J(10), 300, &evicted), (int)Scheduler::Admit::queued);
    assert_true(evicted == J(3) || evicted == J(8));
    assert_int_equal(s.queued(), 4);
    // The oldest of each user keeps its place: 2 starts first.
    auto next = s.finish(100);
    assert_int_equal(next.size(), 1);
    assert_ptr_equal(next[0], J(2));
}

int test_group_scheduler(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_and_queue), cmocka_unit_test(remove_and_take),
        cmocka_unit_test(raised_limits_pump), cmocka_unit_test(zero_queue_is_immediate_busy),
        cmocka_unit_test(full_queue_is_shared)};
    return cmocka_run_group_tests_name("scheduler", tests, nullptr, nullptr);
}
