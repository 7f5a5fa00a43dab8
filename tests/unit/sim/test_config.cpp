// PYTORCH_CUDA_ALLOC_CONF parsing: every key, both grammars (allocator.md 2.2, 2.3), each bad
// value.
#include <stdexcept>

#include "sim_helpers.h"

using namespace simtest;

static AllocatorConfig parse_ok(const char *torch, const char *conf)
{
    return config(torch, conf);
}

static std::string parse_error(const char *torch, const char *conf)
{
    auto r = AllocatorConfig::parse(conf, version(torch));
    if (r.ok()) {
        print_error("'%s' parsed for torch %s\n", conf, torch);
        fail();
    }
    return r.error().message;
}

static void defaults_when_empty(void **)
{
    for (const char *torch : {"1.13", "2.0", "2.6", "2.10"}) {
        const AllocatorConfig c = parse_ok(torch, "");
        EXPECT_U64(c.max_split_size, kUnlimited);
        EXPECT_U64(c.max_non_split_rounding, 20 * MiB);
        EXPECT_U64(c.roundup_power2_divisions[0], 0);
        EXPECT_U64(c.roundup_bypass_threshold, kUnlimited);
        assert_true(c.garbage_collection_threshold == 0.0);
        assert_false(c.expandable_segments);
        assert_false(c.memory_fraction.has_value());
    }
}

static void max_split_size_bounds(void **)
{
    EXPECT_U64(parse_ok("2.6", "max_split_size_mb:200").max_split_size, 200 * MiB);
    EXPECT_U64(parse_ok("1.13", "max_split_size_mb:21").max_split_size, 21 * MiB);
    EXPECT_STR(parse_error("2.6", "max_split_size_mb:10"),
               "xmem: PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb: must be > 20 (got 10)");
    EXPECT_STR(parse_error("1.13", "max_split_size_mb:20"),
               "xmem: PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb: must be > 20 (got 20)");
    // 2.10+ accept 20 (allocator.md 11: >= 20); 2.9 does not
    EXPECT_U64(parse_ok("2.10", "max_split_size_mb:20").max_split_size, 20 * MiB);
    EXPECT_U64(parse_ok("2.15", "max_split_size_mb:20").max_split_size, 20 * MiB);
    EXPECT_CONTAINS(parse_error("2.9", "max_split_size_mb:20"), "must be > 20 (got 20)");
    EXPECT_CONTAINS(parse_error("2.10", "max_split_size_mb:19"),
                    "max_split_size_mb: must be >= 20 (got 19)");
    EXPECT_CONTAINS(parse_error("2.6", "max_split_size_mb:abc"),
                    "max_split_size_mb: expected a whole number of MiB (got 'abc')");
    EXPECT_CONTAINS(parse_error("2.6", "max_split_size_mb:-5"), "max_split_size_mb:");
}

static void max_non_split_rounding(void **)
{
    EXPECT_U64(parse_ok("2.6", "max_non_split_rounding_mb:64").max_non_split_rounding, 64 * MiB);
    EXPECT_CONTAINS(parse_error("2.6", "max_non_split_rounding_mb:8"),
                    "max_non_split_rounding_mb: must be > 20 (got 8)");
    EXPECT_CONTAINS(parse_error("2.5", "max_non_split_rounding_mb:64"),
                    "max_non_split_rounding_mb: unknown option for torch 2.5");
}

static void roundup_single_value(void **)
{
    const AllocatorConfig c = parse_ok("2.6", "roundup_power2_divisions:4");
    for (size_t d : c.roundup_power2_divisions)
        EXPECT_U64(d, 4);
    EXPECT_U64(parse_ok("1.13", "roundup_power2_divisions:1").roundup_power2_divisions[7], 1);
    EXPECT_CONTAINS(parse_error("2.6", "roundup_power2_divisions:3"),
                    "roundup_power2_divisions: divisions must be a power of two (got '3')");
    EXPECT_CONTAINS(parse_error("1.13", "roundup_power2_divisions:0"), "roundup_power2_divisions:");
    // 1.13 has no per-interval form.
    EXPECT_CONTAINS(parse_error("1.13", "roundup_power2_divisions:[256:1]"),
                    "roundup_power2_divisions:");
}

// [256:1,512:2,>:8]: 2.6 fills '>' from the last listed slot (overwriting 512's 2); newest
// from the slot after it (allocator.md 2.3).
static void roundup_interval_list(void **)
{
    const AllocatorConfig c26 = parse_ok("2.6", "roundup_power2_divisions:[256:1,512:2,>:8]");
    for (size_t i = 0; i <= 8; ++i)
        EXPECT_U64(c26.roundup_power2_divisions[i], 1);
    for (size_t i = 9; i < 16; ++i)
        EXPECT_U64(c26.roundup_power2_divisions[i], 8);
    const AllocatorConfig cnew = parse_ok("2.10", "roundup_power2_divisions:[256:1,512:2,>:8]");
    EXPECT_U64(cnew.roundup_power2_divisions[8], 1);
    EXPECT_U64(cnew.roundup_power2_divisions[9], 2);
    EXPECT_U64(cnew.roundup_power2_divisions[10], 8);
    EXPECT_U64(cnew.roundup_power2_divisions[15], 8);
    // spaces are dropped by the 2.x lexer; 0 disables a slot
    const AllocatorConfig sp = parse_ok("2.6", " roundup_power2_divisions : [ 1 : 4 , 64 : 0 ] ");
    EXPECT_U64(sp.roundup_power2_divisions[0], 4);
    EXPECT_U64(sp.roundup_power2_divisions[6], 0);
    EXPECT_U64(sp.roundup_power2_divisions[7], 0); // untouched default
    EXPECT_CONTAINS(parse_error("2.6", "roundup_power2_divisions:[100:2]"),
                    "intervals must be powers of two");
    EXPECT_CONTAINS(parse_error("2.6", "roundup_power2_divisions:[256:3]"),
                    "divisions must be 0 or a power of two");
    EXPECT_CONTAINS(parse_error("2.6", "roundup_power2_divisions:[256:2"), "missing ']'");
}

static void bypass_threshold_is_1_13_only(void **)
{
    EXPECT_U64(parse_ok("1.13", "roundup_bypass_threshold_mb:64").roundup_bypass_threshold,
               64 * MiB);
    EXPECT_CONTAINS(parse_error("2.6", "roundup_bypass_threshold_mb:64"),
                    "roundup_bypass_threshold_mb: unknown option for torch 2.6");
    EXPECT_CONTAINS(parse_error("1.13", "roundup_bypass_threshold_mb:x"),
                    "roundup_bypass_threshold_mb: expected a whole number");
}

static void garbage_collection_threshold(void **)
{
    assert_true(parse_ok("2.6", "garbage_collection_threshold:0.6").garbage_collection_threshold ==
                0.6);
    assert_true(parse_ok("1.13", "garbage_collection_threshold:0.8").garbage_collection_threshold ==
                0.8);
    EXPECT_STR(parse_error("2.6", "garbage_collection_threshold:1.0"),
               "xmem: PYTORCH_CUDA_ALLOC_CONF: garbage_collection_threshold: must be > 0 and < 1 "
               "(got 1.0)");
    EXPECT_CONTAINS(parse_error("2.6", "garbage_collection_threshold:0"), "must be > 0 and < 1");
    EXPECT_CONTAINS(parse_error("2.6", "garbage_collection_threshold:half"),
                    "expected a number between 0 and 1");
}

static void expandable_and_backend(void **)
{
    assert_true(parse_ok("2.1", "expandable_segments:True").expandable_segments);
    assert_false(parse_ok("2.6", "expandable_segments:False").expandable_segments);
    EXPECT_CONTAINS(parse_error("2.6", "expandable_segments:yes"),
                    "expandable_segments: expected True or False (got 'yes')");
    EXPECT_CONTAINS(parse_error("2.0", "expandable_segments:True"),
                    "expandable_segments: unknown option for torch 2.0");
    parse_ok("2.6", "backend:native");
    EXPECT_CONTAINS(parse_error("2.6", "backend:cudaMallocAsync"),
                    "backend: cudaMallocAsync is not simulated");
    EXPECT_CONTAINS(parse_error("2.6", "backend:magic"),
                    "backend: expected native or cudaMallocAsync");
    EXPECT_CONTAINS(parse_error("1.13", "backend:native"),
                    "backend: unknown option for torch 1.13");
}

static void accounting_neutral_keys(void **)
{
    parse_ok("2.6", "release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:False,pinned_"
                    "num_register_threads:8");
    EXPECT_CONTAINS(parse_error("2.6", "release_lock_on_cudamalloc:1"),
                    "release_lock_on_cudamalloc: expected True or False");
    EXPECT_CONTAINS(parse_error("2.6", "pinned_num_register_threads:many"),
                    "pinned_num_register_threads: expected a whole number");
}

// per_process_memory_fraction from 2.10, large_segment_size_mb from 2.11 (allocator.md 2.3).
static void newest_keys(void **)
{
    const AllocatorConfig c =
        parse_ok("2.11", "per_process_memory_fraction:0.5,large_segment_size_mb:32");
    assert_true(c.memory_fraction.has_value() && *c.memory_fraction == 0.5);
    EXPECT_U64(c.large_segment_size, 32 * MiB);
    EXPECT_U64(c.max_non_split_rounding, 32 * MiB); // default follows large_segment_size
    assert_true(*parse_ok("2.10", "per_process_memory_fraction:0.25").memory_fraction == 0.25);
    EXPECT_CONTAINS(parse_error("2.9", "per_process_memory_fraction:0.5"),
                    "per_process_memory_fraction: unknown option for torch 2.9");
    EXPECT_CONTAINS(parse_error("2.10", "large_segment_size_mb:32"),
                    "large_segment_size_mb: unknown option for torch 2.10");
    EXPECT_CONTAINS(parse_error("2.10", "per_process_memory_fraction:2"),
                    "per_process_memory_fraction: expected a fraction");
    EXPECT_CONTAINS(parse_error("2.11", "large_segment_size_mb:3"),
                    "large_segment_size_mb: must be a positive multiple of 2 MiB");
}

// Each key is accepted from the release whose wheel lists it and refused before
// (allocator.md 2.3); host-pinned and graph keys are validated and ignored.
static void keys_by_release(void **)
{
    struct Case {
        const char *conf, *first, *before;
    };
    const Case cases[] = {
        {"graph_capture_record_stream_reuse:True", "2.9", "2.8"},
        {"pinned_reserve_segment_size_mb:64", "2.10", "2.9"},
        {"throw_on_cudamalloc_oom:False", "2.12", "2.11"},
        {"pinned_free_catch_all:True", "2.12", "2.11"},
        {"pinned_max_round_threshold_mb:64", "2.13", "2.12"},
        {"pinned_max_cached_size_mb:512", "2.13", "2.12"},
    };
    for (const Case &c : cases) {
        parse_ok(c.first, c.conf);
        parse_ok("2.15", c.conf);
        EXPECT_CONTAINS(parse_error(c.before, c.conf),
                        std::string(": unknown option for torch ") + c.before + " (known: ");
    }
    EXPECT_CONTAINS(parse_error("2.13", "pinned_max_cached_size_mb:lots"),
                    "pinned_max_cached_size_mb: expected a whole number");
    EXPECT_CONTAINS(parse_error("2.12", "pinned_free_catch_all:yes"),
                    "pinned_free_catch_all: expected True or False");
    EXPECT_CONTAINS(parse_error("2.15", "max_split_size:200"),
                    "pinned_max_round_threshold_mb, pinned_max_cached_size_mb, "
                    "expandable_segments_reserve, expandable_segments_reserve_by_class)");
}

// Keys that change device memory in ways the wheels do not show: one line naming the key and
// the release (allocator.md 2.3).
static void unknowable_keys_refused(void **)
{
    EXPECT_STR(parse_error("2.14", "throw_on_cudamalloc_oom:True"),
               "xmem: PYTORCH_CUDA_ALLOC_CONF: throw_on_cudamalloc_oom: True is not simulated for "
               "torch 2.14: how it cuts short the out-of-memory path is not known (remove it or "
               "set it to False)");
    EXPECT_STR(parse_error("2.15", "expandable_segments:True,expandable_segments_reserve:0.5"),
               "xmem: PYTORCH_CUDA_ALLOC_CONF: expandable_segments_reserve: not simulated for "
               "torch 2.15: how a smaller address reservation changes the growth of expandable "
               "segments is not known (remove it)");
    EXPECT_CONTAINS(parse_error("2.15", "expandable_segments_reserve_by_class:kv:40G"),
                    "expandable_segments_reserve_by_class: not simulated for torch 2.15");
    EXPECT_CONTAINS(parse_error("2.14", "expandable_segments_reserve:0.5"),
                    "expandable_segments_reserve: unknown option for torch 2.14");
}

static void grammar_errors(void **)
{
    EXPECT_STR(
        parse_error("2.6", "max_split_size:200"),
        "xmem: PYTORCH_CUDA_ALLOC_CONF: max_split_size: unknown option for torch 2.6 (known: "
        "max_split_size_mb, "
        "roundup_power2_divisions, garbage_collection_threshold, backend, expandable_segments, "
        "max_non_split_rounding_mb, release_lock_on_cudamalloc, pinned_use_cuda_host_register, "
        "pinned_use_background_threads, pinned_num_register_threads)");
    EXPECT_CONTAINS(parse_error("2.6", "max_split_size_mb"), "max_split_size_mb: expected ':'");
    EXPECT_CONTAINS(parse_error("2.6", "max_split_size_mb:"), "max_split_size_mb: missing value");
    // 2.x drops spaces, so a space is not a separator there
    EXPECT_CONTAINS(parse_error("2.6", "max_split_size_mb:200 garbage_collection_threshold:0.5"),
                    "max_split_size_mb: expected a whole number of MiB (got "
                    "'200garbage_collection_threshold')");
    EXPECT_CONTAINS(parse_error("1.13", "max_split_size_mb"),
                    "max_split_size_mb: expected key:value");
    // 1.13 separates options by spaces or commas
    const AllocatorConfig c = parse_ok(
        "1.13", "max_split_size_mb:64 garbage_collection_threshold:0.5,roundup_power2_divisions:2");
    EXPECT_U64(c.max_split_size, 64 * MiB);
    EXPECT_U64(c.roundup_power2_divisions[3], 2);
    // the last of repeated keys wins, as in PyTorch
    EXPECT_U64(parse_ok("2.6", "max_split_size_mb:64,max_split_size_mb:128").max_split_size,
               128 * MiB);
}

static void validate_device_model(void **)
{
    AllocatorConfig c = config("2.6");
    c.memory_fraction = 1.5;
    EXPECT_CONTAINS(c.validate().error().message, "memory fraction must be between 0 and 1");
    c = config("2.6");
    c.device_total_bytes = 10;
    c.device_used_outside_bytes = 11;
    EXPECT_CONTAINS(c.validate().error().message, "exceeds the device capacity");
    c = config("2.0");
    c.expandable_segments = true;
    EXPECT_CONTAINS(c.validate().error().message, "expandable_segments needs torch 2.1");
    bool threw = false;
    try {
        DeviceCachingAllocator a(c);
    } catch (const std::invalid_argument &e) {
        threw = std::string(e.what()).rfind("xmem: ", 0) == 0;
    }
    assert_true(threw);
}

int run_config_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_when_empty),
        cmocka_unit_test(max_split_size_bounds),
        cmocka_unit_test(max_non_split_rounding),
        cmocka_unit_test(roundup_single_value),
        cmocka_unit_test(roundup_interval_list),
        cmocka_unit_test(bypass_threshold_is_1_13_only),
        cmocka_unit_test(garbage_collection_threshold),
        cmocka_unit_test(expandable_and_backend),
        cmocka_unit_test(accounting_neutral_keys),
        cmocka_unit_test(newest_keys),
        cmocka_unit_test(keys_by_release),
        cmocka_unit_test(unknowable_keys_refused),
        cmocka_unit_test(grammar_errors),
        cmocka_unit_test(validate_device_model),
    };
    return cmocka_run_group_tests_name("config", tests, nullptr, nullptr);
}
