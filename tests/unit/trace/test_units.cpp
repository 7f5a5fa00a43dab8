#include "test_helpers.h"
#include "test-list.h"

#include "trace/units.h"

using xmem::trace::format_bytes;
using xmem::trace::parse_byte_size;

static uint64_t size_of(const char *text)
{
    uint64_t out = 0;
    assert_true(parse_byte_size(text, out));
    return out;
}

static void parses_bytes_and_suffixes(void **)
{
    assert_int_equal(size_of("1073741824"), 1073741824ULL);
    assert_int_equal(size_of("512M"), 512ULL << 20);
    assert_int_equal(size_of("40G"), 40ULL << 30);
    assert_int_equal(size_of("40GiB"), 40ULL << 30);
    assert_int_equal(size_of("80GB"), 80000000000ULL);
    assert_int_equal(size_of("1.5G"), 3ULL << 29);
    assert_int_equal(size_of("4K"), 4096);
    assert_int_equal(size_of("2TiB"), 2ULL << 40);
    assert_int_equal(size_of("18446744073709551615"), UINT64_MAX);
}

static void rejects_non_sizes(void **)
{
    uint64_t out = 7;
    for (const char *bad : {"", "G", "40X", "40 G", "-1", "0", "0G", "1..5G", ".", "40g",
                            "18446744073709551616", "99999999999T", "1e9"})
        assert_false(parse_byte_size(bad, out));
    assert_int_equal(out, 7); // untouched on failure
}

static void formats_binary_units(void **)
{
    assert_string_equal(format_bytes(0).c_str(), "0 B");
    assert_string_equal(format_bytes(1023).c_str(), "1023 B");
    assert_string_equal(format_bytes(1024).c_str(), "1.00 KiB");
    assert_string_equal(format_bytes(20971520).c_str(), "20.00 MiB");
    assert_string_equal(format_bytes(3ULL << 29).c_str(), "1.50 GiB");
}

int run_units_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_bytes_and_suffixes),
        cmocka_unit_test(rejects_non_sizes),
        cmocka_unit_test(formats_binary_units),
    };
    return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
