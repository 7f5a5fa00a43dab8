/* test_value.c — --xmem values and sizes. */
#include <string.h>

#include "test-list.h"
#include "value.h"

static void bare_and_named_modes(void **state)
{
    struct xmem_value v;
    char err[256];

    assert_int_equal(xmem_value_parse(NULL, &v, err, sizeof(err)), 0);
    assert_int_equal(v.mode, XMEM_MODE_AUTO);
    assert_int_equal(xmem_value_parse("auto", &v, err, sizeof(err)), 0);
    assert_int_equal(v.mode, XMEM_MODE_AUTO);
    assert_int_equal(xmem_value_parse("check", &v, err, sizeof(err)), 0);
    assert_int_equal(v.mode, XMEM_MODE_CHECK);
    assert_int_equal(xmem_value_parse("OFF", &v, err, sizeof(err)), 0);
    assert_int_equal(v.mode, XMEM_MODE_OFF);
}

static void sizes(void **state)
{
    struct xmem_value v;
    char err[256];

    assert_int_equal(xmem_value_parse("12G", &v, err, sizeof(err)), 0);
    assert_int_equal(v.mode, XMEM_MODE_BUDGET);
    assert_int_equal(v.budget_bytes, 12ULL << 30);
    assert_int_equal(xmem_value_parse("12288M", &v, err, sizeof(err)), 0);
    assert_int_equal(v.budget_bytes, 12ULL << 30);
    assert_int_equal(xmem_value_parse("1.5GiB", &v, err, sizeof(err)), 0);
    assert_int_equal(v.budget_bytes, 3ULL << 29);
    assert_int_equal(xmem_value_parse("512", &v, err, sizeof(err)), 0);
    assert_int_equal(v.budget_bytes, 512ULL << 20);
    assert_int_equal(xmem_value_parse("2tb", &v, err, sizeof(err)), 0);
    assert_int_equal(v.budget_bytes, 2ULL << 40);
}

static void bad_values_name_the_fix(void **state)
{
    static const char *const bad[] = {"bogus", "12X", "-4G",  "0",   "12GG",
                                      "100T",  "G",   "12 G", "0.5K"};
    struct xmem_value v;
    char err[256];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(xmem_value_parse(bad[i], &v, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "xmem: --xmem: invalid value"));
        assert_non_null(strstr(err, bad[i]));
        assert_non_null(strstr(err, "--xmem=12G"));
    }
}

/* The one number rule (docs/enforcement.md "Numbers"), which xmem_lib.lua's decimal()
 * shares: what strtoull or tonumber would also take is refused. */
static void decimals(void **state)
{
    static const char *const bad[] = {
        "",   "1e3", "0x400", "1000.5",           "-1",    "+1",    " 1",
        "1 ", "1\n", "1M",    "\xef\xbc\x91",     "1_000", "0X1",   ".5",
        "1.", "inf", "nan",   "9999999999999999", "1e+3",  "1,000", "\t7",
    };
    uint64_t v = 0;

    assert_int_equal(xmem_decimal_parse("4096", 16777216, &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(xmem_decimal_parse("0", 10, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(xmem_decimal_parse("007", 10, &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(xmem_decimal_parse("999999999999999", UINT64_MAX, &v), 0); /* 15 digits */
    assert_int_equal(v, 999999999999999ULL);
    assert_int_equal(xmem_decimal_parse("16777217", 16777216, &v), -1); /* above max */
    assert_int_equal(xmem_decimal_parse(NULL, 10, &v), -1);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 42;
        if (xmem_decimal_parse(bad[i], UINT64_MAX, &v) != -1 || v != 42)
            fail_msg("accepted: '%s'", bad[i]);
    }
}

/* Rounded up, as job_submit.lua's mb(): the same bytes read the same MiB on every line. */
static void format(void **state)
{
    assert_int_equal(xmem_mib_ceil(12ULL << 30), 12288);
    assert_int_equal(xmem_mib_ceil(300ULL << 20), 300);
    assert_int_equal(xmem_mib_ceil(1288490189ULL), 1229); /* not whole MiB: up, never down */
    assert_int_equal(xmem_mib_ceil(0), 0);
}

int xmem_test_group_value(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bare_and_named_modes),
        cmocka_unit_test(sizes),
        cmocka_unit_test(bad_values_name_the_fix),
        cmocka_unit_test(decimals),
        cmocka_unit_test(format),
    };
    return cmocka_run_group_tests_name("value", tests, NULL, NULL);
}
