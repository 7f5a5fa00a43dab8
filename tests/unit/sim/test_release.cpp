// Capacity and the retry chain (allocator.md 4.8–4.11).
#include "sim_helpers.h"

using namespace simtest;

// allocator.md 4.8: cudaMalloc succeeds iff outside + total_allocated_memory + alloc_size <= total.
static void device_capacity_is_exact(void **)
{
    AllocatorConfig c = config("2.6", "", 100 * MiB);
    c.device_used_outside_bytes = 40 * MiB;
    DeviceCachingAllocator a(c);
    must_malloc(a, 60 * MiB); // 40 + 60 = 100: fits exactly
    MallocResult r = a.malloc(512);
    assert_false(r.ok);
    EXPECT_U64(r.alloc_size, 2 * MiB);
}

// allocator.md 4.9: a cached segment of another stream is released by release_cached_blocks and the
// retry (isRetry=true) succeeds: num_alloc_retries 1, no OOM.
static void retry_after_release_cached(void **)
{
    auto a = make("2.6", "", 100 * MiB);
    must_free(*a, must_malloc(*a, 60 * MiB, 1));
    const uint64_t p = must_malloc(*a, 50 * MiB, 0);
    assert_true(p != 0);
    EXPECT_I64(stat(*a, "num_alloc_retries"), 1);
    EXPECT_I64(stat(*a, "num_ooms"), 0);
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 50 * MiB);
    EXPECT_I64(stat(*a, "num_sync_all_streams"), 1);
    must_hold_invariants(*a);
}

// allocator.md 4.10: with max_split_size set, release_available frees the cached oversize blocks of
// the stream from the largest down until enough is freed.
static void release_available_frees_enough(void **)
{
    auto a = make("2.6", "max_split_size_mb:200", 1000 * MiB);
    must_malloc(*a, 500 * MiB);
    const uint64_t c250 = must_malloc(*a, 250 * MiB);
    const uint64_t c210 = must_malloc(*a, 210 * MiB);
    must_free(*a, c250);
    must_free(*a, c210);
    must_malloc(*a, 300 * MiB);
    EXPECT_I64(stat(*a, "num_alloc_retries"), 0); // succeeded before release_cached_blocks
    EXPECT_I64(stat(*a, "num_sync_all_streams"), 0);
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 800 * MiB);
    EXPECT_I64(stat(*a, "oversize_segments.current"), 2);
}

// allocator.md 4.10/15.5: release_available may free blocks yet report failure. Held 600 MiB,
// cached 250 MiB (oversize) and 100 MiB; a 300 MiB request frees the 250 MiB block, then finds only
// the 100 MiB one (< max_split) and returns false, so the first plain retry is skipped:
// release_cached_blocks runs and the isRetry call succeeds. Had it returned true, 600 + 100 + 300 =
// 1000 MiB would have fit without a retry.
static void release_available_frees_yet_fails(void **)
{
    auto a = make("2.6", "max_split_size_mb:200", 1000 * MiB);
    Recorder rec;
    must_malloc(*a, 600 * MiB);
    const uint64_t c250 = must_malloc(*a, 250 * MiB);
    const uint64_t c100 = must_malloc(*a, 100 * MiB);
    must_free(*a, c250);
    must_free(*a, c100);
    a->set_observer(&rec);
    must_malloc(*a, 300 * MiB);
    EXPECT_I64(stat(*a, "num_alloc_retries"), 1);
    EXPECT_STR(rec.actions(), "segment_free segment_free segment_alloc alloc");
    EXPECT_U64(rec.entries[0].size, 250 * MiB);
    EXPECT_U64(rec.entries[1].size, 100 * MiB);
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 900 * MiB);
    must_hold_invariants(*a);
}

// allocator.md 4.11: empty_cache frees whole free segments of every stream, never split ones.
static void empty_cache_keeps_split_segments(void **)
{
    auto a = make("2.6");
    const uint64_t p = must_malloc(*a, 5 * MiB, 0); // 20 MiB segment, still in use
    must_free(*a, must_malloc(*a, 30 * MiB, 1));    // 30 MiB, free
    must_free(*a, must_malloc(*a, 4096, 2));        // 2 MiB small, free
    a->empty_cache();
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 20 * MiB);
    EXPECT_I64(stat(*a, "segment.all.current"), 1);
    EXPECT_I64(stat(*a, "num_device_free"), 2);
    must_free(*a, p);
    a->empty_cache();
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 0);
    EXPECT_I64(stat(*a, "reserved_bytes.all.peak"), 52 * MiB);
    must_hold_invariants(*a);
}

int run_release_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_capacity_is_exact),
        cmocka_unit_test(retry_after_release_cached),
        cmocka_unit_test(release_available_frees_enough),
        cmocka_unit_test(release_available_frees_yet_fails),
        cmocka_unit_test(empty_cache_keeps_split_segments),
    };
    return cmocka_run_group_tests_name("release", tests, nullptr, nullptr);
}
