// Streams (allocator.md 6) and record_stream deferral (allocator.md 4.1, 5.2).
#include "sim_helpers.h"

using namespace simtest;

// allocator.md 6.1: a free block is reusable only by its own stream.
static void stream_isolation(void **)
{
    auto a = make("2.6");
    const uint64_t p1 = must_malloc(*a, 5 * MiB, 1);
    must_free(*a, p1);
    const uint64_t p2 = must_malloc(*a, 5 * MiB, 2);
    assert_true(p2 != p1);
    EXPECT_I64(stat(*a, "segment.all.current"), 2);
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 40 * MiB);
    EXPECT_U64(must_malloc(*a, 5 * MiB, 1), p1);
    must_hold_invariants(*a);
}

// allocator.md 5.1/5.2: after record_stream, free drops allocated_bytes at once but the block stays
// active until the next malloc's process_events returns it (allocator.md 4.1).
static void record_stream_defers_free(void **)
{
    auto a = make("2.6");
    Recorder rec;
    a->set_observer(&rec);
    const uint64_t p = must_malloc(*a, 5 * MiB, 0);
    EXPECT_OK(a->record_stream(p, 1));
    must_free(*a, p);
    EXPECT_I64(stat(*a, "allocated_bytes.all.current"), 0);
    EXPECT_I64(stat(*a, "active_bytes.all.current"), 5 * MiB);
    EXPECT_I64(stat(*a, "active.all.current"), 1);
    EXPECT_STR(rec.actions(), "segment_alloc alloc free_requested");
    must_hold_invariants(*a);
    EXPECT_U64(must_malloc(*a, 5 * MiB, 0), p); // completed first, then reused
    EXPECT_STR(rec.actions(), "segment_alloc alloc free_requested free_completed alloc");
    EXPECT_I64(stat(*a, "segment.all.current"), 1);
}

// A pending block cannot be merged or reused; with a delay of 2 mallocs the next malloc
// splits the tail instead.
static void completion_delay_is_configurable(void **)
{
    AllocatorConfig c = config("2.6");
    c.event_completion_delay = 2;
    DeviceCachingAllocator a(c);
    const uint64_t p = must_malloc(a, 5 * MiB, 0);
    EXPECT_OK(a.record_stream(p, 7));
    must_free(a, p);
    const uint64_t q = must_malloc(a, 5 * MiB, 0); // 1st malloc after: still pending
    EXPECT_U64(q, p + 5 * MiB);
    must_hold_invariants(a);
    const uint64_t r = must_malloc(a, 5 * MiB, 0); // 2nd: completed, merged, reused
    EXPECT_U64(r, p);
    EXPECT_I64(stat(a, "active.all.current"), 2);
}

// allocator.md 6.2: a use on the block's own stream is ignored: free completes at once.
static void record_own_stream_ignored(void **)
{
    auto a = make("2.6");
    const uint64_t p = must_malloc(*a, 5 * MiB, 3);
    EXPECT_OK(a->record_stream(p, 3));
    must_free(*a, p);
    EXPECT_I64(stat(*a, "active_bytes.all.current"), 0);
}

// allocator.md 4.11: empty_cache synchronises every stream first, so pending frees complete and
// their segments are released.
static void empty_cache_completes_pending(void **)
{
    auto a = make("2.6");
    const uint64_t p = must_malloc(*a, 5 * MiB, 0);
    EXPECT_OK(a->record_stream(p, 1));
    EXPECT_OK(a->record_stream(p, 2));
    must_free(*a, p);
    a->empty_cache();
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 0);
    EXPECT_I64(stat(*a, "active.all.current"), 0);
    EXPECT_I64(stat(*a, "num_sync_all_streams"), 1);
    EXPECT_I64(stat(*a, "num_device_free"), 1);
    must_hold_invariants(*a);
}

int run_streams_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stream_isolation),
        cmocka_unit_test(record_stream_defers_free),
        cmocka_unit_test(completion_delay_is_configurable),
        cmocka_unit_test(record_own_stream_ignored),
        cmocka_unit_test(empty_cache_completes_pending),
    };
    return cmocka_run_group_tests_name("streams", tests, nullptr, nullptr);
}
