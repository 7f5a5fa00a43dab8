// FlatMap against std::unordered_map under a seeded random workload, including the
// backward-shift deletion and the shrink path.
#include "test_helpers.h"
#include "test-list.h"

#include "trace/flat_map.h"

#include <random>
#include <unordered_map>

using xmem::trace::FlatMap;

static void matches_unordered_map_under_random_operations(void **)
{
    FlatMap<uint64_t> map;
    std::unordered_map<uint64_t, uint64_t> ref;
    std::mt19937_64 rng(12345);
    for (int step = 0; step < 200000; ++step) {
        // Small key range forces collisions, long probe runs and reuse of erased slots.
        uint64_t key = rng() % (step < 100000 ? 5000 : 50);
        if (rng() % 3 != 0) {
            bool inserted = map.insert(key, key * 7);
            assert_int_equal(inserted, ref.emplace(key, key * 7).second);
        } else {
            uint64_t got = 0;
            bool erased = map.erase(key, &got);
            assert_int_equal(erased, ref.erase(key) == 1);
            if (erased)
                assert_int_equal(got, key * 7);
        }
        assert_int_equal(map.size(), ref.size());
    }
    for (const auto &kv : ref) {
        uint64_t *value = map.find(kv.first);
        assert_non_null(value);
        assert_int_equal(*value, kv.second);
    }
    size_t visited = 0;
    map.for_each([&](uint64_t key, uint64_t value) {
        assert_int_equal(ref.at(key), value);
        ++visited;
    });
    assert_int_equal(visited, ref.size());
}

static void duplicate_insert_keeps_first_value(void **)
{
    FlatMap<uint64_t> map;
    assert_true(map.insert(0, 1)); // key 0 is an ordinary key
    assert_false(map.insert(0, 2));
    assert_int_equal(*map.find(0), 1);
    assert_false(map.erase(99));
    assert_true(map.insert(UINT64_MAX, 3));
    assert_int_equal(*map.find(UINT64_MAX), 3);
}

static void shrinks_after_mass_erase(void **)
{
    FlatMap<uint64_t> map;
    for (uint64_t i = 0; i < 100000; ++i)
        map.insert(i, i);
    for (uint64_t i = 0; i < 100000; ++i)
        assert_true(map.erase(i));
    assert_int_equal(map.size(), 0);
    assert_null(map.find(5));
    assert_true(map.insert(5, 6));
    assert_int_equal(*map.find(5), 6);
}

int run_flat_map_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_unordered_map_under_random_operations),
        cmocka_unit_test(duplicate_insert_keeps_first_value),
        cmocka_unit_test(shrinks_after_mass_erase),
    };
    return cmocka_run_group_tests_name("flat_map", tests, NULL, NULL);
}
