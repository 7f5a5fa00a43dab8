// round_size (allocator.md 4.2) and get_allocation_size (allocator.md 4.4), hand-computed.
#include "allocator/rounding.h"
#include "sim_helpers.h"

using namespace simtest;

static size_t rounded(const char *torch, const char *conf, size_t size)
{
    const AllocatorConfig c = config(torch, conf);
    return round_size(size, c, profile_for(c.torch));
}

// allocator.md 4.2, 16: below 512 → 512; otherwise a multiple of 512.
static void rounds_to_512(void **)
{
    EXPECT_U64(rounded("2.6", "", 1), 512);
    EXPECT_U64(rounded("2.6", "", 40), 512);
    EXPECT_U64(rounded("2.6", "", 512), 512);
    EXPECT_U64(rounded("2.6", "", 513), 1024);
    EXPECT_U64(rounded("2.6", "", 40000), 40448);
    EXPECT_U64(rounded("1.13", "", 40000), 40448);
}

// allocator.md 16: divisions 4: 5000 → 5120 (step 4096/4); 1200 → 1536 (1200 <= 512·4: plain
// rounding, not the 1280 the documentation claims).
static void power2_divisions(void **)
{
    EXPECT_U64(rounded("2.6", "roundup_power2_divisions:4", 5000), 5120);
    EXPECT_U64(rounded("2.6", "roundup_power2_divisions:4", 1200), 1536);
    EXPECT_U64(rounded("1.13", "roundup_power2_divisions:4", 5000), 5120);
    EXPECT_U64(rounded("2.6", "roundup_power2_divisions:4", 4096), 4096); // powers of two stay
    // 1.5 MiB + 1 with 4 divisions: floor 1 MiB, step 256 KiB → 1.75 MiB
    EXPECT_U64(rounded("2.6", "roundup_power2_divisions:4", 3 * MiB / 2 + 1), 7 * MiB / 4);
    EXPECT_U64(roundup_power2_next_division(5000, 4, false), 5120);
    EXPECT_U64(roundup_power2_next_division(5120, 4, false), 5120); // already on a step
}

// allocator.md 4.2: 1.13 (and up to 2.3) hand D=1 to the division routine, which returns the size
// unrounded; 2.4+ round to 512 (PR #126830).
static void d1_quirk(void **)
{
    EXPECT_U64(rounded("1.13", "roundup_power2_divisions:1", 1000), 1000);
    EXPECT_U64(rounded("2.3", "roundup_power2_divisions:1", 1000), 1000);
    EXPECT_U64(rounded("2.4", "roundup_power2_divisions:1", 1000), 1024);
    EXPECT_U64(rounded("2.6", "roundup_power2_divisions:1", 1000), 1024);
    EXPECT_U64(rounded("1.13", "roundup_power2_divisions:1", 100), 512); // < 512 still 512
}

// allocator.md 2.2: 1.13 bypass threshold: sizes above it get plain 512 rounding.
static void bypass_threshold(void **)
{
    const char *conf = "roundup_power2_divisions:4,roundup_bypass_threshold_mb:1";
    EXPECT_U64(rounded("1.13", conf, 5000), 5120);
    EXPECT_U64(rounded("1.13", conf, 3 * MiB / 2 + 1), 3 * MiB / 2 + 512);
    EXPECT_U64(rounded("1.13", "roundup_power2_divisions:4", 3 * MiB / 2 + 1), 7 * MiB / 4);
}

// allocator.md 2.3: per-interval slots, and the '>' quirk of 2.6 vs the newest fill.
static void interval_slots_and_gt_quirk(void **)
{
    const char *conf = "roundup_power2_divisions:[256:1,512:2,>:8]";
    // 300 MiB + 1 is in slot 8 (D=1): plain rounding in both.
    EXPECT_U64(rounded("2.6", conf, 300 * MiB + 1), 300 * MiB + 512);
    EXPECT_U64(rounded("2.10", conf, 300 * MiB + 1), 300 * MiB + 512);
    // 600 MiB + 1 is in slot 9: 2.6 has D=8 (step 64 MiB) → 640 MiB; newest D=2 (step 256 MiB) →
    // 768 MiB.
    EXPECT_U64(rounded("2.6", conf, 600 * MiB + 1), 640 * MiB);
    EXPECT_U64(rounded("2.10", conf, 600 * MiB + 1), 768 * MiB);
    // small sizes use slot 0: D=1 → plain.
    EXPECT_U64(rounded("2.6", conf, 5000), 5120);
}

// allocator.md 4.4: segment sizes.
static void allocation_size(void **)
{
    const AllocatorConfig c = config("2.6");
    EXPECT_U64(get_allocation_size(512, c), 2 * MiB);
    EXPECT_U64(get_allocation_size(MiB, c), 2 * MiB);
    EXPECT_U64(get_allocation_size(MiB + 512, c), 20 * MiB);
    EXPECT_U64(get_allocation_size(10 * MiB - 512, c), 20 * MiB);
    EXPECT_U64(get_allocation_size(10 * MiB, c), 10 * MiB);
    EXPECT_U64(get_allocation_size(13107200, c), 14 * MiB); // 12.5 MiB
    EXPECT_U64(get_allocation_size(27 * MiB / 2, c), 14 * MiB);
    const AllocatorConfig newest = config("2.11", "large_segment_size_mb:32");
    EXPECT_U64(get_allocation_size(MiB + 512, newest), 32 * MiB);
}

int run_rounding_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rounds_to_512),
        cmocka_unit_test(power2_divisions),
        cmocka_unit_test(d1_quirk),
        cmocka_unit_test(bypass_threshold),
        cmocka_unit_test(interval_slots_and_gt_quirk),
        cmocka_unit_test(allocation_size),
    };
    return cmocka_run_group_tests_name("rounding", tests, nullptr, nullptr);
}
