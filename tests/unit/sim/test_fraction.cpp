// Per-process memory fraction (allocator.md 8): a limit on total_allocated_memory checked before
// every new segment, without calling cudaMalloc.
#include "sim_helpers.h"

using namespace simtest;

static void fraction_limits_reserved(void **)
{
    auto a = make("2.6", "", 100 * MiB);
    EXPECT_OK(a->set_memory_fraction(0.5));
    must_malloc(*a, 40 * MiB);
    MallocResult r = a->malloc(12 * MiB); // 40 + 12 > 50
    assert_false(r.ok);
    EXPECT_CONTAINS(r.oom_message, "50.00 MiB allowed; ");
    EXPECT_I64(stat(*a, "num_device_alloc"), 1); // the limit is checked before cudaMalloc
    must_malloc(*a, 10 * MiB);                   // 40 + 10 = 50 fits
}

static void fraction_range_checked(void **)
{
    auto a = make("2.6", "", 100 * MiB);
    auto r = a->set_memory_fraction(1.5);
    assert_false(r.ok());
    EXPECT_CONTAINS(r.error().message,
                    "xmem: set_per_process_memory_fraction: fraction must be between 0 and 1");
    assert_false(a->set_memory_fraction(-0.1).ok());
}

// Newest: per_process_memory_fraction in the config applies at construction (allocator.md 2.3).
static void fraction_from_config(void **)
{
    auto a = make("2.10", "per_process_memory_fraction:0.25", 100 * MiB);
    must_malloc(*a, 24 * MiB);
    assert_false(a->malloc(2 * MiB).ok);
}

int run_fraction_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fraction_limits_reserved),
        cmocka_unit_test(fraction_range_checked),
        cmocka_unit_test(fraction_from_config),
    };
    return cmocka_run_group_tests_name("fraction", tests, nullptr, nullptr);
}
