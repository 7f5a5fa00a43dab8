// test-prepare_line.cpp — each user's preparations on the pool, the line behind them, the
// idle-thread reserve that lets a user go beyond its bound, and leaving the line.
#include "cmocka.hpp"
#include "prepare_line.h"
#include "test-list.h"

using namespace xmem::server;

static EstimateJob *J(int i)
{
    return reinterpret_cast<EstimateJob *>((uintptr_t)(i * 16));
}

static void bound_then_line(void **)
{
    PrepareLine line(2, 1);
    assert_true(line.enter(100, J(1), 1));
    assert_true(line.enter(100, J(2), 1));
    assert_false(line.enter(100, J(3), 1)); // at the bound, no thread beyond the reserve
    assert_false(line.enter(100, J(4), 1));
    assert_true(line.enter(200, J(5), 1)); // another user is apart
    assert_int_equal(line.preparing(100), 2);
    assert_int_equal(line.waiting(100), 2);
    // Oldest first; the caller enters the next one again.
    assert_ptr_equal(line.end(100), J(3));
    assert_true(line.enter(100, J(3), 1));
    assert_ptr_equal(line.end(100), J(4));
    assert_true(line.enter(100, J(4), 1));
    assert_null(line.end(100)); // nobody left in line
    assert_int_equal(line.preparing(100), 1);
}

static void idle_threads_beyond_reserve(void **)
{
    PrepareLine line(1, 1);
    assert_true(line.enter(100, J(1), 4));
    assert_true(line.enter(100, J(2), 2));  // two idle: one is spare beyond the reserve
    assert_false(line.enter(100, J(3), 1)); // only the reserve is left
    assert_int_equal(line.preparing(100), 2);
}

static void leave_line(void **)
{
    PrepareLine line(1, 0);
    assert_true(line.enter(100, J(1), 0));
    assert_false(line.enter(100, J(2), 0));
    assert_false(line.enter(100, J(3), 0));
    assert_true(line.leave(100, J(2)));
    assert_false(line.leave(100, J(2))); // not in line any more
    assert_false(line.leave(100, J(1))); // preparing, not in line
    assert_false(line.leave(200, J(3))); // another user's line
    assert_ptr_equal(line.end(100), J(3));
    assert_true(line.enter(100, J(3), 0));
    assert_null(line.end(100));
    assert_int_equal(line.preparing(100), 0);
    assert_int_equal(line.waiting(100), 0);
}

int test_group_prepare_line(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(bound_then_line),
                                       cmocka_unit_test(idle_threads_beyond_reserve),
                                       cmocka_unit_test(leave_line)};
    return cmocka_run_group_tests_name("prepare_line", tests, nullptr, nullptr);
}
