// free (allocator.md 5): stats at free time, merging with free neighbours, bad pointers.
#include "sim_helpers.h"

using namespace simtest;

// One 20 MiB segment [A 2][B 3][C 4][free 11]: frees merge step by step (allocator.md 5.3) and the
// inactive_split stats follow (allocator.md 4.14).
static void frees_merge_with_neighbours(void **)
{
    auto a = make("2.6");
    const uint64_t pa = must_malloc(*a, 2 * MiB);
    const uint64_t pb = must_malloc(*a, 3 * MiB);
    const uint64_t pc = must_malloc(*a, 4 * MiB);
    EXPECT_U64(pb, pa + 2 * MiB);
    EXPECT_U64(pc, pa + 5 * MiB);
    EXPECT_I64(stat(*a, "inactive_split.all.current"), 1);
    EXPECT_I64(stat(*a, "inactive_split_bytes.all.current"), 11 * MiB);
    must_free(*a, pb);
    EXPECT_I64(stat(*a, "inactive_split.all.current"), 2);
    EXPECT_I64(stat(*a, "inactive_split_bytes.all.current"), 14 * MiB);
    EXPECT_I64(stat(*a, "allocated_bytes.all.current"), 6 * MiB);
    must_free(*a, pa); // merges with B: [free 5][C 4][free 11]
    EXPECT_I64(stat(*a, "inactive_split.all.current"), 2);
    EXPECT_I64(stat(*a, "inactive_split_bytes.all.current"), 16 * MiB);
    must_hold_invariants(*a);
    must_free(*a, pc); // whole segment free again
    EXPECT_I64(stat(*a, "inactive_split.all.current"), 0);
    EXPECT_I64(stat(*a, "inactive_split_bytes.all.current"), 0);
    EXPECT_I64(stat(*a, "allocated_bytes.all.current"), 0);
    EXPECT_I64(stat(*a, "active_bytes.all.current"), 0);
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 20 * MiB); // allocator.md 5.4: kept
    EXPECT_I64(stat(*a, "allocation.all.allocated"), 3);
    EXPECT_I64(stat(*a, "allocation.all.freed"), 3);
    EXPECT_I64(stat(*a, "allocated_bytes.all.peak"), 9 * MiB);
    // The merged 20 MiB block serves a 20 MiB request from the same address.
    EXPECT_U64(must_malloc(*a, 20 * MiB), pa);
    must_hold_invariants(*a);
}

static void bad_frees_are_errors(void **)
{
    auto a = make("2.6");
    const uint64_t p = must_malloc(*a, 4096);
    auto r = a->free(p + 512);
    assert_false(r.ok());
    EXPECT_CONTAINS(r.error().message, "xmem: free(0x");
    EXPECT_CONTAINS(r.error().message, "not a live allocation");
    EXPECT_I64(stat(*a, "allocation.all.current"), 1);
    must_free(*a, p);
    assert_false(a->free(p).ok()); // double free
    EXPECT_I64(stat(*a, "allocation.all.current"), 0);
    EXPECT_I64(stat(*a, "allocation.all.freed"), 1);
    assert_false(a->record_stream(p, 3).ok());
}

// requested_bytes counts tensor bytes, allocated_bytes block bytes (allocator.md 10.3).
static void requested_vs_allocated(void **)
{
    auto a = make("2.6");
    const uint64_t p = must_malloc(*a, 1000);
    EXPECT_I64(stat(*a, "requested_bytes.all.current"), 1000);
    EXPECT_I64(stat(*a, "allocated_bytes.all.current"), 1024);
    must_free(*a, p);
    EXPECT_I64(stat(*a, "requested_bytes.all.current"), 0);
    EXPECT_I64(stat(*a, "requested_bytes.all.freed"), 1000);
}

int run_free_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frees_merge_with_neighbours),
        cmocka_unit_test(bad_frees_are_errors),
        cmocka_unit_test(requested_vs_allocated),
    };
    return cmocka_run_group_tests_name("free", tests, nullptr, nullptr);
}
