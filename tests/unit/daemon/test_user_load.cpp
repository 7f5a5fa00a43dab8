// test-user_load.cpp — per-user in-flight bounds: count, bytes, release, users apart.
#include "cmocka.hpp"
#include "test-list.h"
#include "user_load.h"

#include <cstring>

using namespace xmem::server;

static void count_bound(void **)
{
    UserLoads loads(2, 1000);
    assert_true(loads.take(100, 10).ok());
    assert_true(loads.take(100, 10).ok());
    auto refused = loads.take(100, 10);
    assert_false(refused.ok());
    assert_non_null(strstr(refused.error().message.c_str(), "2 estimates in flight"));
    assert_int_equal(loads.requests(100), 2); // a refusal counts nothing
    assert_true(loads.take(200, 10).ok());    // another user is apart
    loads.release(100, 10);
    assert_true(loads.take(100, 10).ok());
}

static void byte_bound(void **)
{
    UserLoads loads(10, 100);
    assert_true(loads.take(100, 60).ok());
    auto refused = loads.take(100, 41);
    assert_false(refused.ok());
    assert_non_null(strstr(refused.error().message.c_str(), "already hold 60 bytes"));
    assert_true(loads.take(100, 40).ok()); // exactly at the bound
    assert_int_equal(loads.bytes(100), 100);
}

static void release_forgets(void **)
{
    UserLoads loads(10, 100);
    assert_false(loads.take(100, 101).ok()); // alone over the bound: no entry is left
    assert_int_equal(loads.users(), 0);
    assert_true(loads.take(100, 5).ok());
    assert_true(loads.take(100, 7).ok());
    loads.release(100, 5);
    assert_int_equal(loads.requests(100), 1);
    assert_int_equal(loads.bytes(100), 7);
    loads.release(100, 7);
    assert_int_equal(loads.users(), 0); // a user with nothing in flight is forgotten
    loads.release(300, 1);              // never counted: nothing happens
    assert_int_equal(loads.users(), 0);
}

int test_group_user_load(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(count_bound), cmocka_unit_test(byte_bound),
                                       cmocka_unit_test(release_forgets)};
    return cmocka_run_group_tests_name("user_load", tests, nullptr, nullptr);
}
