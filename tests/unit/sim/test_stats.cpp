// DeviceStats under torch.cuda.memory_stats() names (allocator.md 10).
#include <string>
#include <vector>

#include "sim_helpers.h"

using namespace simtest;

static std::vector<std::string> keys_of(const DeviceStats &s)
{
    std::vector<std::string> keys;
    s.for_each([&](std::string_view k, int64_t) { keys.emplace_back(k); });
    return keys;
}

// 2.x: 9 StatArrays × 3 pools × 4 fields + 2 counters + 2 Stats × 4 + 3 device counters +
// max_split_size = 122 keys; 1.13 lacks requested_bytes and the device counters: 107.
static void key_sets_per_release(void **)
{
    auto a26 = make("2.6");
    auto a113 = make("1.13");
    const auto k26 = keys_of(a26->stats());
    const auto k113 = keys_of(a113->stats());
    EXPECT_U64(k26.size(), 122);
    EXPECT_U64(k113.size(), 107);
    int64_t v = 0;
    assert_false(a113->stats().get("requested_bytes.all.current", &v));
    assert_false(a113->stats().get("num_device_alloc", &v));
    assert_true(a26->stats().get("requested_bytes.large_pool.peak", &v));
    EXPECT_STR(k26.front(), "active.all.allocated");
    EXPECT_STR(k26.back(), "segment.small_pool.peak");
    for (size_t i = 1; i < k26.size(); ++i)
        assert_true(k26[i - 1] < k26[i]); // sorted, unique
    EXPECT_I64(stat(*a26, "max_split_size"), -1);
    // 2.12 added num_oom_rejections (its libtorch_python lists it; 2.11's does not).
    auto a211 = make("2.11");
    auto a212 = make("2.12");
    EXPECT_U64(keys_of(a211->stats()).size(), 122);
    EXPECT_U64(keys_of(a212->stats()).size(), 123);
    assert_false(a211->stats().get("num_oom_rejections", &v));
    EXPECT_I64(stat(*a212, "num_oom_rejections"), 0);
}

static void reset_peak(void **)
{
    auto a = make("2.6");
    const uint64_t p = must_malloc(*a, 5 * MiB);
    must_free(*a, p);
    EXPECT_I64(stat(*a, "allocated_bytes.all.peak"), 5 * MiB);
    a->reset_peak_stats();
    EXPECT_I64(stat(*a, "allocated_bytes.all.peak"), 0);
    EXPECT_I64(stat(*a, "reserved_bytes.all.peak"), 20 * MiB);      // still reserved
    EXPECT_I64(stat(*a, "allocated_bytes.all.allocated"), 5 * MiB); // totals are kept
}

static void pools_add_up(void **)
{
    auto a = make("2.6");
    must_malloc(*a, 4096);
    must_malloc(*a, 5 * MiB);
    EXPECT_I64(stat(*a, "allocated_bytes.all.current"),
               stat(*a, "allocated_bytes.small_pool.current") +
                   stat(*a, "allocated_bytes.large_pool.current"));
    EXPECT_I64(stat(*a, "segment.all.current"), 2);
    EXPECT_I64(stat(*a, "allocation.small_pool.current"), 1);
    EXPECT_I64(stat(*a, "allocation.large_pool.current"), 1);
}

// Device counters and oversize Stats move both ways (allocator.md 4.8, 4.11, 4.15, 5.1).
static void counters_follow_segments(void **)
{
    auto a = make("2.6", "max_split_size_mb:64");
    const uint64_t big = must_malloc(*a, 100 * MiB);
    const uint64_t small = must_malloc(*a, 4096);
    EXPECT_I64(stat(*a, "num_device_alloc"), 2);
    EXPECT_I64(stat(*a, "oversize_allocations.current"), 1);
    EXPECT_I64(stat(*a, "oversize_segments.current"), 1);
    must_free(*a, big);
    must_free(*a, small);
    EXPECT_I64(stat(*a, "oversize_allocations.current"), 0);
    EXPECT_I64(stat(*a, "oversize_allocations.freed"), 1);
    a->empty_cache();
    EXPECT_I64(stat(*a, "num_device_free"), 2);
    EXPECT_I64(stat(*a, "oversize_segments.current"), 0);
    EXPECT_I64(stat(*a, "oversize_segments.peak"), 1);
    EXPECT_I64(stat(*a, "segment.all.freed"), 2);
    EXPECT_I64(stat(*a, "reserved_bytes.all.freed"), 102 * MiB);
}

int run_stats_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(key_sets_per_release),
        cmocka_unit_test(reset_peak),
        cmocka_unit_test(pools_add_up),
        cmocka_unit_test(counters_follow_segments),
    };
    return cmocka_run_group_tests_name("stats", tests, nullptr, nullptr);
}
