// Expandable segments (allocator.md 7, 2.1+): pages mapped on demand, reserved page-rounded, no
// segment stat, pages unmapped by empty_cache.
#include "sim_helpers.h"

using namespace simtest;

static std::unique_ptr<DeviceCachingAllocator> expandable(const char *torch = "2.6")
{
    return make(torch, "expandable_segments:True", 80 * GiB);
}

// allocator.md 7.2/7.3: a 5 MiB request maps one 20 MiB page; the segment count stays 0.
static void maps_pages_not_segments(void **)
{
    auto a = expandable();
    Recorder rec;
    a->set_observer(&rec);
    const uint64_t p = must_malloc(*a, 5 * MiB);
    EXPECT_I64(stat(*a, "reserved_bytes.large_pool.current"), 20 * MiB);
    EXPECT_I64(stat(*a, "segment.all.current"), 0);
    EXPECT_I64(stat(*a, "num_device_alloc"), 1);
    EXPECT_STR(rec.actions(), "segment_map alloc");
    EXPECT_U64(rec.entries[0].addr, p);
    EXPECT_U64(rec.entries[0].size, 20 * MiB);
    // The 15 MiB free tail and one more page serve 30 MiB, contiguously after p.
    const uint64_t q = must_malloc(*a, 30 * MiB);
    EXPECT_U64(q, p + 5 * MiB);
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 40 * MiB);
    EXPECT_I64(stat(*a, "allocated_bytes.all.current"), 35 * MiB);
    EXPECT_I64(stat(*a, "segment.all.current"), 0);
    EXPECT_I64(stat(*a, "inactive_split.all.current"), 0); // not tracked for expandable
    must_hold_invariants(*a);
}

// allocator.md 7.1: the small pool maps 2 MiB pages.
static void small_pool_pages(void **)
{
    auto a = expandable();
    must_malloc(*a, 40000);
    EXPECT_I64(stat(*a, "reserved_bytes.small_pool.current"), 2 * MiB);
    must_malloc(*a, 3 * MiB / 4);
    must_malloc(*a, 3 * MiB / 4);
    EXPECT_I64(stat(*a, "reserved_bytes.small_pool.current"), 2 * MiB); // 40448 + 1.5 MiB fit
    must_malloc(*a, 3 * MiB / 4);
    EXPECT_I64(stat(*a, "reserved_bytes.small_pool.current"), 4 * MiB);
    must_hold_invariants(*a);
}

// allocator.md 7.4: empty_cache unmaps the whole pages inside free blocks only: with [p 5 MiB] kept
// and [5, 40) MiB free, page [20, 40) goes and [5, 20) stays mapped.
static void empty_cache_unmaps_whole_free_pages(void **)
{
    auto a = expandable();
    const uint64_t p = must_malloc(*a, 5 * MiB);
    const uint64_t q = must_malloc(*a, 30 * MiB);
    must_free(*a, q);
    a->empty_cache();
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 20 * MiB);
    EXPECT_I64(stat(*a, "num_device_free"), 1);
    must_hold_invariants(*a);
    // The unmapped hole is preferred by the next growth; reuse the mapped tail first.
    EXPECT_U64(must_malloc(*a, 15 * MiB), p + 5 * MiB);
    must_free(*a, p);
    a->empty_cache(); // [0, 5) free + [5, 20) allocated: nothing whole to unmap
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 20 * MiB);
    must_hold_invariants(*a);
}

// Freeing everything and empty_cache returns reserved to 0 and drops the range.
static void full_release(void **)
{
    auto a = expandable();
    std::vector<uint64_t> ptrs;
    for (uint64_t s : {uint64_t{5 * MiB}, uint64_t{100 * MiB}, uint64_t{7 * MiB}, uint64_t{4096},
                       uint64_t{900000}})
        ptrs.push_back(must_malloc(*a, s));
    for (uint64_t p : ptrs)
        must_free(*a, p);
    a->empty_cache();
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 0);
    must_hold_invariants(*a);
    must_malloc(*a, 5 * MiB);
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 20 * MiB);
}

// Streams keep separate ranges (allocator.md 7.1: one per stream and pool).
static void per_stream_ranges(void **)
{
    auto a = expandable();
    const uint64_t p0 = must_malloc(*a, 5 * MiB, 0);
    const uint64_t p1 = must_malloc(*a, 5 * MiB, 1);
    assert_true(p1 > p0 + 80 * GiB); // the second range starts after the first reservation
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 40 * MiB);
}

// Mapping is limited by the device: a page that does not fit is an OOM after release.
static void mapping_respects_capacity(void **)
{
    auto a = make("2.6", "expandable_segments:True", 50 * MiB);
    must_malloc(*a, 30 * MiB); // 2 pages = 40 MiB
    MallocResult r = a->malloc(15 * MiB);
    assert_false(r.ok);
    EXPECT_I64(stat(*a, "num_ooms"), 1);
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 40 * MiB);
    must_malloc(*a, 9 * MiB); // fits in the 10 MiB tail of the second page
    must_hold_invariants(*a);
}

// allocator.md 4.5 (2.1+): a free block at the growing end of a range is judged by the size it can
// expand to, so a larger block that cannot grow is taken first. [A 10][B 5][X 5|unmapped]:
// after freeing A, a 4 MiB request takes A's 10 MiB rather than X's 5 MiB.
static void best_fit_prefers_blocks_that_cannot_grow(void **)
{
    auto a = expandable();
    const uint64_t pa = must_malloc(*a, 10 * MiB);
    const uint64_t pb = must_malloc(*a, 5 * MiB);
    EXPECT_U64(pb, pa + 10 * MiB);
    must_free(*a, pa);
    EXPECT_U64(must_malloc(*a, 4 * MiB), pa);
    must_hold_invariants(*a);
}

// allocator.md 4.10 (2.5+): release_available_cached_blocks never cudaFrees an expandable block;
// the release step unmaps its pages instead, and the OOM follows the retry.
static void release_available_skips_expandable(void **)
{
    auto a = make("2.6", "expandable_segments:True,max_split_size_mb:100", 250 * MiB);
    Recorder rec;
    must_free(*a, must_malloc(*a, 150 * MiB)); // 8 pages mapped, all free
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 160 * MiB);
    a->set_observer(&rec);
    assert_false(a->malloc(300 * MiB).ok); // 160 + 140 > 250
    EXPECT_STR(rec.actions(), "segment_unmap oom");
    EXPECT_I64(stat(*a, "num_alloc_retries"), 1);
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 0);
    must_hold_invariants(*a);
}

// allocator.md 7.5: the fraction check still uses alloc_size. With 50 MiB allowed, 20 MiB mapped
// and a 15 MiB free tail, 34 MiB needs only one more page (40 MiB in all) but 20 + 34 > 50: OOM.
static void fraction_checks_alloc_size(void **)
{
    auto a = make("2.6", "expandable_segments:True", 100 * MiB);
    EXPECT_OK(a->set_memory_fraction(0.5));
    must_malloc(*a, 5 * MiB);
    MallocResult r = a->malloc(34 * MiB);
    assert_false(r.ok);
    EXPECT_U64(r.alloc_size, 34 * MiB);
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 20 * MiB);
    must_malloc(*a, 30 * MiB); // 20 + 30 <= 50: maps one page
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 40 * MiB);
}

int run_expandable_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(maps_pages_not_segments),
        cmocka_unit_test(small_pool_pages),
        cmocka_unit_test(empty_cache_unmaps_whole_free_pages),
        cmocka_unit_test(full_release),
        cmocka_unit_test(per_stream_ranges),
        cmocka_unit_test(mapping_respects_capacity),
        cmocka_unit_test(best_fit_prefers_blocks_that_cannot_grow),
        cmocka_unit_test(release_available_skips_expandable),
        cmocka_unit_test(fraction_checks_alloc_size),
    };
    return cmocka_run_group_tests_name("expandable", tests, nullptr, nullptr);
}
