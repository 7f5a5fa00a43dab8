// Garbage collection (allocator.md 4.7): only with a fraction, oldest-first by the average age.
#include "sim_helpers.h"

using namespace simtest;

// Stream 1 caches 40 MiB; stream 0 then takes 30 MiB (no GC: 70 > 50 is checked first at
// the next miss) and 12 MiB: with GC on, total 70 > 0.5·100 frees the cached 40 MiB.
static uint64_t reserved_after_gc_scenario(const char *torch, bool set_fraction)
{
    AllocatorConfig c = config(torch, "garbage_collection_threshold:0.5", 100 * MiB);
    if (set_fraction)
        c.memory_fraction = 1.0;
    DeviceCachingAllocator a(c);
    must_free(a, must_malloc(a, 40 * MiB, 1));
    must_malloc(a, 30 * MiB, 0);
    must_malloc(a, 12 * MiB, 0);
    must_hold_invariants(a);
    return static_cast<uint64_t>(stat(a, "reserved_bytes.all.current"));
}

// allocator.md 4.7: without a fraction GC never runs; 1.13/2.6 run it even for fraction 1.0; the
// newest releases treat 1.0 as "no fraction".
static void gc_needs_a_fraction(void **)
{
    EXPECT_U64(reserved_after_gc_scenario("2.6", false), 82 * MiB);
    EXPECT_U64(reserved_after_gc_scenario("2.6", true), 42 * MiB);
    EXPECT_U64(reserved_after_gc_scenario("1.13", true), 42 * MiB);
    EXPECT_U64(reserved_after_gc_scenario("2.10", true), 82 * MiB);
}

// allocator.md 4.7: ages count large-pool get_free_block calls since the block was freed;
// blocks at or above the average age go first and the sweep stops once the target is reached.
// A (40 MiB) freed at call 1, B (30 MiB) at call 4; at call 6 ages are 5 and 2, average
// 3.5: only A is released.
static void gc_frees_older_than_average(void **)
{
    AllocatorConfig c = config("2.6", "garbage_collection_threshold:0.5", 200 * MiB);
    c.memory_fraction = 1.0;
    DeviceCachingAllocator a(c);
    Recorder rec;
    const uint64_t pa = must_malloc(a, 40 * MiB, 1); // call 1
    must_free(a, pa);
    must_malloc(a, 12 * MiB, 2);               // call 2
    must_malloc(a, 12 * MiB, 2);               // call 3
    must_free(a, must_malloc(a, 30 * MiB, 3)); // call 4
    must_malloc(a, 20 * MiB, 4);               // call 5: total 94 + 20 = 114
    a.set_observer(&rec);
    must_malloc(a, 10 * MiB, 5); // call 6: 114 > 100 → GC
    EXPECT_STR(rec.actions(), "segment_free segment_alloc alloc");
    EXPECT_U64(rec.entries[0].addr, pa);
    EXPECT_I64(stat(a, "reserved_bytes.all.current"), 84 * MiB);
    must_hold_invariants(a);
}

// GC only considers whole segments of the large pool (never split ones, never small).
static void gc_skips_split_and_small(void **)
{
    AllocatorConfig c = config("2.6", "garbage_collection_threshold:0.1", 100 * MiB);
    c.memory_fraction = 1.0;
    DeviceCachingAllocator a(c);
    must_malloc(a, 5 * MiB, 1);            // split 20 MiB segment, 15 MiB free
    must_free(a, must_malloc(a, 4096, 1)); // small segment, free
    must_malloc(a, 30 * MiB, 2);           // miss → GC finds nothing to free
    EXPECT_I64(stat(a, "reserved_bytes.all.current"), 52 * MiB);
    EXPECT_I64(stat(a, "num_device_free"), 0);
}

int run_gc_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gc_needs_a_fraction),
        cmocka_unit_test(gc_frees_older_than_average),
        cmocka_unit_test(gc_skips_split_and_small),
    };
    return cmocka_run_group_tests_name("gc", tests, nullptr, nullptr);
}
