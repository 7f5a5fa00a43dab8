// limit: peak x (1 + margin), up to a MiB, capped at the GPU when the job fits.
#include "analysis/limit.h"

#include "est_helpers.h"

using namespace esttest;

static void margin_rounding_and_cap(void **)
{
    EXPECT_U64(recommended_limit(1000 * MiB, 40000 * MiB, 0.05), 1050 * MiB);
    EXPECT_U64(recommended_limit(1000 * MiB + 1, 40000 * MiB, 0.0), 1001 * MiB);
    EXPECT_U64(recommended_limit(39000 * MiB, 40000 * MiB, 0.05), 40000 * MiB); // capped
    EXPECT_U64(recommended_limit(41000 * MiB, 40000 * MiB, 0.05), 43050 * MiB); // does not fit
    EXPECT_U64(recommended_limit(1000 * MiB, 0, 0.05), 1050 * MiB);             // unknown size
}

int run_limit_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(margin_rounding_and_cap),
    };
    return cmocka_run_group_tests_name("limit", tests, nullptr, nullptr);
}
