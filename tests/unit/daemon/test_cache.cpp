// test_cache.cpp — estimate cache: hits, expiry, LRU bound, reconfigure.
#include "cache.h"
#include "cmocka.hpp"
#include "test-list.h"

using namespace xmem::server;

static Estimate est(uint64_t peak)
{
    Estimate e;
    e.peak_bytes = peak;
    e.gpu = "A100-40GB";
    return e;
}

static void hit_and_expiry(void **)
{
    Cache c(10, 100);
    Estimate out;
    assert_false(c.get("k", 0, &out));
    c.put("k", est(5), 100);
    assert_true(c.get("k", 109, &out));
    assert_int_equal(out.peak_bytes, 5);
    assert_false(c.get("k", 110, &out)); // expired exactly at ttl
    assert_int_equal(c.size(), 0);       // and dropped
}

static void lru_bound(void **)
{
    Cache c(1000, 3);
    Estimate out;
    c.put("a", est(1), 0);
    c.put("b", est(2), 0);
    c.put("c", est(3), 0);
    assert_true(c.get("a", 1, &out)); // a is now most recent
    c.put("d", est(4), 1);            // evicts b
    assert_int_equal(c.size(), 3);
    assert_false(c.get("b", 1, &out));
    assert_true(c.get("a", 1, &out));
    assert_true(c.get("d", 1, &out));
    c.configure(1000, 1);
    assert_int_equal(c.size(), 1);
    c.clear();
    assert_int_equal(c.size(), 0);
}

static void disabled(void **)
{
    Cache c(0, 100);
    Estimate out;
    c.put("k", est(1), 0);
    assert_false(c.get("k", 0, &out));
    Cache d(100, 0);
    d.put("k", est(1), 0);
    assert_int_equal(d.size(), 0);
}

static void flat_memory(void **)
{
    Cache c(1000, 100);
    for (int i = 0; i < 10000; i++)
        c.put("key" + std::to_string(i), est((uint64_t)i), 0);
    assert_int_equal(c.size(), 100);
}

int test_group_cache(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(hit_and_expiry),
                                       cmocka_unit_test(lru_bound), cmocka_unit_test(disabled),
                                       cmocka_unit_test(flat_memory)};
    return cmocka_run_group_tests_name("cache", tests, nullptr, nullptr);
}
