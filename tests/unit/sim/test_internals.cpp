// The containers behind the allocator: PtrMap (open addressing) and NodeArena.
#include <map>
#include <random>
#include <set>

#include "allocator/node_arena.h"
#include "allocator/ptr_map.h"
#include "sim_helpers.h"

using namespace simtest;

// Against std::map under random inserts and erases, through several growths; colliding
// probe chains must survive backward-shift deletion.
static void ptr_map_matches_std_map(void **)
{
    PtrMap m;
    std::map<uint64_t, Block *> ref;
    std::mt19937_64 rng(42);
    std::vector<Block> blocks(1);
    Block *tag = &blocks[0];
    for (int i = 0; i < 200000; ++i) {
        const uint64_t ptr = 0x7f0000000000ull + (rng() % 20000) * 512;
        if (ref.count(ptr)) {
            assert_true(m.erase(ptr));
            ref.erase(ptr);
        } else {
            m.insert(ptr, tag + 0);
            ref[ptr] = tag;
        }
        if (i % 997 == 0) {
            for (const auto &[p, b] : ref)
                assert_true(m.find(p) == b);
            EXPECT_U64(m.size(), ref.size());
        }
    }
    for (const auto &[p, b] : ref)
        assert_true(m.find(p) == b);
    assert_null(m.find(0x1234));
    assert_false(m.erase(0x1234));
}

static void node_arena_recycles(void **)
{
    NodeArena arena;
    using Set = std::set<int, std::less<int>, ArenaAllocator<int>>;
    Set s{std::less<int>(), ArenaAllocator<int>(&arena)};
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 5000; ++i)
            s.insert(i * 7 % 5000);
        EXPECT_U64(s.size(), 5000);
        for (int i = 0; i < 5000; i += 2)
            s.erase(i);
        EXPECT_U64(s.size(), 2500);
        s.clear();
    }
}

int run_internals_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ptr_map_matches_std_map),
        cmocka_unit_test(node_arena_recycles),
    };
    return cmocka_run_group_tests_name("internals", tests, nullptr, nullptr);
}
