// test-leaders.cpp — one leader per cache key; only the leader steps down.
#include "cmocka.hpp"
#include "leaders.h"
#include "test-list.h"

using namespace xmem::server;

static EstimateJob *J(int i)
{
    return reinterpret_cast<EstimateJob *>((uintptr_t)(i * 16));
}

static void lead_find_step_down(void **)
{
    Leaders leaders;
    assert_null(leaders.find("k1"));
    leaders.lead("k1", J(1));
    leaders.lead("k2", J(2));
    assert_ptr_equal(leaders.find("k1"), J(1));
    assert_false(leaders.step_down("k1", J(2))); // not k1's leader: nothing changes
    assert_ptr_equal(leaders.find("k1"), J(1));
    assert_true(leaders.step_down("k1", J(1)));
    assert_null(leaders.find("k1"));
    assert_false(leaders.step_down("k1", J(1))); // once
    assert_int_equal(leaders.size(), 1);
}

// The leader failed for its own reasons: it steps down and its first follower leads anew.
static void follower_leads_anew(void **)
{
    Leaders leaders;
    leaders.lead("k", J(1));
    assert_true(leaders.step_down("k", J(1)));
    leaders.lead("k", J(3));
    assert_ptr_equal(leaders.find("k"), J(3));
    assert_false(leaders.step_down("k", J(1)));
    assert_true(leaders.step_down("k", J(3)));
    assert_int_equal(leaders.size(), 0);
}

int test_group_leaders(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(lead_find_step_down),
                                       cmocka_unit_test(follower_leads_anew)};
    return cmocka_run_group_tests_name("leaders", tests, nullptr, nullptr);
}
