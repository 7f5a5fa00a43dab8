// malloc: pools (allocator.md 4.3), segment sizes (allocator.md 4.4), best fit (allocator.md 4.5),
// splitting (allocator.md 4.13, 4.14) and allocation stats (allocator.md 4.15); the worked examples
// of allocator.md 16.
#include "sim_helpers.h"

using namespace simtest;

// allocator.md 16: 40,000 B → 40,448 B block in a new 2 MiB small segment.
static void small_request_gets_small_segment(void **)
{
    auto a = make("2.6");
    MallocResult r = a->malloc(40000);
    assert_true(r.ok);
    EXPECT_U64(r.block_size, 40448);
    EXPECT_U64(r.alloc_size, 2 * MiB);
    EXPECT_I64(stat(*a, "reserved_bytes.small_pool.current"), 2 * MiB);
    EXPECT_I64(stat(*a, "segment.small_pool.current"), 1);
    EXPECT_I64(stat(*a, "allocated_bytes.all.current"), 40448);
    EXPECT_I64(stat(*a, "requested_bytes.all.current"), 40000);
    EXPECT_I64(stat(*a, "inactive_split_bytes.small_pool.current"), 2 * MiB - 40448);
    EXPECT_U64(a->malloc(40).block_size, 512);
    must_hold_invariants(*a);
}

// allocator.md 16: 5 MiB → 20 MiB segment split 5 + 15; then 14.5 MiB reuses the 15 MiB block
// unsplit (0.5 MiB <= 1 MiB of slack) and allocated_bytes counts all 15 MiB.
static void five_mib_then_unsplit_reuse(void **)
{
    auto a = make("2.6");
    MallocResult r = a->malloc(5 * MiB);
    EXPECT_U64(r.alloc_size, 20 * MiB);
    EXPECT_I64(stat(*a, "reserved_bytes.large_pool.current"), 20 * MiB);
    EXPECT_I64(stat(*a, "inactive_split.large_pool.current"), 1);
    EXPECT_I64(stat(*a, "inactive_split_bytes.large_pool.current"), 15 * MiB);
    MallocResult r2 = a->malloc(29 * MiB / 2);
    EXPECT_U64(r2.ptr, r.ptr + 5 * MiB);
    EXPECT_U64(r2.block_size, 15 * MiB);
    EXPECT_I64(stat(*a, "allocated_bytes.all.current"), 20 * MiB);
    EXPECT_I64(stat(*a, "segment.all.current"), 1);
    EXPECT_I64(stat(*a, "inactive_split.all.current"), 0);
    EXPECT_I64(stat(*a, "inactive_split_bytes.all.current"), 0);
    must_hold_invariants(*a);
}

// allocator.md 16: 12.5 MiB → dedicated 14 MiB segment, 1.5 MiB tail split off; 13.5 MiB → 14 MiB
// with an unsplit 0.5 MiB tail counted in allocated_bytes.
static void dedicated_segments(void **)
{
    auto a = make("2.6");
    MallocResult r = a->malloc(13107200);
    EXPECT_U64(r.alloc_size, 14 * MiB);
    EXPECT_U64(r.block_size, 13107200);
    EXPECT_I64(stat(*a, "inactive_split_bytes.all.current"), 14 * MiB - 13107200);
    auto b = make("2.6");
    MallocResult r2 = b->malloc(27 * MiB / 2);
    EXPECT_U64(r2.block_size, 14 * MiB);
    EXPECT_I64(stat(*b, "allocated_bytes.all.current"), 14 * MiB);
    EXPECT_I64(stat(*b, "inactive_split.all.current"), 0);
}

// allocator.md 15.5: 1 MiB + 1 B is a large request → a 20 MiB segment; exactly 1 MiB stays small.
static void one_mib_plus_one(void **)
{
    auto a = make("2.6");
    EXPECT_U64(a->malloc(MiB + 1).alloc_size, 20 * MiB);
    EXPECT_I64(stat(*a, "reserved_bytes.large_pool.current"), 20 * MiB);
    EXPECT_U64(a->malloc(MiB).alloc_size, 2 * MiB);
    EXPECT_I64(stat(*a, "reserved_bytes.small_pool.current"), 2 * MiB);
}

// allocator.md 4.5: equal-size free blocks: the lowest address wins, whatever the free order.
static void best_fit_ties_by_lowest_address(void **)
{
    auto a = make("2.6");
    const uint64_t x1 = must_malloc(*a, 5 * MiB);
    const uint64_t y1 = must_malloc(*a, 15 * MiB); // fills segment 1
    const uint64_t x2 = must_malloc(*a, 5 * MiB);
    const uint64_t y2 = must_malloc(*a, 15 * MiB); // fills segment 2
    assert_true(y1 < y2);
    must_free(*a, y2);
    must_free(*a, y1);
    EXPECT_U64(must_malloc(*a, 15 * MiB), y1);
    EXPECT_U64(must_malloc(*a, 15 * MiB), y2);
    (void)x1;
    (void)x2;
}

// allocator.md 4.5: best fit prefers the smallest block that fits, not the first or lowest.
static void best_fit_smallest(void **)
{
    auto a = make("2.6");
    const uint64_t big = must_malloc(*a, 12 * MiB);   // 12 MiB segment
    const uint64_t small = must_malloc(*a, 11 * MiB); // 12 MiB segment, 1 MiB tail unsplit
    must_free(*a, big);
    must_free(*a, small);
    EXPECT_U64(must_malloc(*a, 11 * MiB), big); // both 12 MiB: lowest address
    const uint64_t c = must_malloc(*a, 30 * MiB);
    must_free(*a, c);
    EXPECT_U64(must_malloc(*a, 11 * MiB), small); // 12 MiB fits better than 30 MiB
}

// allocator.md 4.5 oversize rules with max_split_size_mb:200 (allocator.md 16): a free 300 MiB
// block serves 290 MiB (300 < 290 + 20) but not 270 MiB, and never 150 MiB.
static void oversize_rules(void **)
{
    auto a = make("2.6", "max_split_size_mb:200");
    const uint64_t p300 = must_malloc(*a, 300 * MiB);
    EXPECT_I64(stat(*a, "oversize_segments.current"), 1);
    EXPECT_I64(stat(*a, "max_split_size"), 200 * MiB);
    must_free(*a, p300);
    MallocResult r290 = a->malloc(290 * MiB);
    EXPECT_U64(r290.ptr, p300);
    EXPECT_U64(r290.block_size, 300 * MiB); // never split: size >= max_split_size
    EXPECT_I64(stat(*a, "oversize_allocations.current"), 1);
    must_free(*a, r290.ptr);
    MallocResult r270 = a->malloc(270 * MiB);
    assert_true(r270.ptr != p300);
    EXPECT_I64(stat(*a, "segment.all.current"), 2);
    must_free(*a, r270.ptr);
    MallocResult r150 = a->malloc(150 * MiB);
    assert_true(r150.ptr != p300 && r150.ptr != r270.ptr);
    EXPECT_I64(stat(*a, "segment.all.current"), 3);
    EXPECT_I64(stat(*a, "oversize_segments.current"), 2);
    must_hold_invariants(*a);
}

// allocator.md 4.5: the tolerance is max_non_split_rounding_mb in 2.6+ (fixed 20 MiB before).
static void non_split_rounding_tolerance(void **)
{
    auto a = make("2.6", "max_split_size_mb:200,max_non_split_rounding_mb:64");
    const uint64_t p = must_malloc(*a, 300 * MiB);
    must_free(*a, p);
    EXPECT_U64(must_malloc(*a, 250 * MiB), p); // 300 < 250 + 64
    auto b = make("2.5", "max_split_size_mb:200");
    const uint64_t q = must_malloc(*b, 300 * MiB);
    must_free(*b, q);
    assert_true(must_malloc(*b, 250 * MiB) != q); // 300 >= 250 + 20
}

// allocate(0) never reaches the allocator.
static void zero_bytes(void **)
{
    auto a = make("2.6");
    MallocResult r = a->malloc(0);
    assert_true(r.ok);
    EXPECT_U64(r.ptr, 0);
    EXPECT_I64(stat(*a, "allocation.all.current"), 0);
    EXPECT_OK(a->free(0));
}

// A request no device can hold is an OOM, not an overflow.
static void absurd_request_is_oom(void **)
{
    auto a = make("2.6");
    MallocResult r = a->malloc(~uint64_t{0});
    assert_false(r.ok);
    EXPECT_I64(stat(*a, "num_ooms"), 1);
}

int run_malloc_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_request_gets_small_segment),
        cmocka_unit_test(five_mib_then_unsplit_reuse),
        cmocka_unit_test(dedicated_segments),
        cmocka_unit_test(one_mib_plus_one),
        cmocka_unit_test(best_fit_ties_by_lowest_address),
        cmocka_unit_test(best_fit_smallest),
        cmocka_unit_test(oversize_rules),
        cmocka_unit_test(non_split_rounding_tolerance),
        cmocka_unit_test(zero_bytes),
        cmocka_unit_test(absurd_request_is_oom),
    };
    return cmocka_run_group_tests_name("malloc", tests, nullptr, nullptr);
}
