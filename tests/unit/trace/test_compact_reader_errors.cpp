// Every error the format names (docs/trace-format.md "Errors"), each as one line
// "xmem: FILE:LINE: what", plus the ones a truncated or damaged file produces.
#include "reader_helpers.h"
#include "test-list.h"

using namespace xmem::test;

namespace
{

struct Case {
    const char *trace;
    const char *expected; // substring of the error, including FILE:LINE
};

const std::string H = "#xmem-trace 1\n";

void expect_error(const std::string &trace, const std::string &expected)
{
    ReadOutcome r = read_compact(trace);
    if (r.error.empty())
        print_error("trace read cleanly but should fail with \"%s\":\n%s\n", expected.c_str(),
                    trace.c_str());
    assert_false(r.error.empty());
    assert_contains(r.error, expected);
    assert_true(r.error.rfind("xmem: t.xtrace:", 0) == 0);
    assert_true(r.error.find('\n') == std::string::npos);
}

} // namespace

static void rejects_wrong_first_line(void **)
{
    expect_error("", "t.xtrace:1: not an xmem trace (expected '#xmem-trace 1')");
    expect_error("#xmem-trace 2\nZ 0 0 0\n", "t.xtrace:1: not an xmem trace");
    expect_error("{\"device_traces\": []}\n", "t.xtrace:1: not an xmem trace");
    expect_error("#xmem-trace 1", "t.xtrace:1: not an xmem trace");
}

static void rejects_malformed_records(void **)
{
    const Case cases[] = {
        {"\nZ 0 0 0\n", ":2: empty line"},
        {"Q 1\nZ 0 0 0\n", ":2: unknown record 'Q'"},
        {"AA 1 2 g 0 0\n", ":2: unknown record 'AA'"},
        {"A 1 2 g 0\n", ":2: A record needs 5 fields (A id bytes dev stream ctx), got 4"},
        {"A 1 2 g 0 0 9\n", ":2: A record needs 5 fields"},
        {"A 1 2 g 0 0 \n", ":2: A record needs 5 fields"},
        {"A 1  2 g 0\n", ":2: A record: bytes is empty"},
        {"A x 2 g 0 0\n", ":2: A record: id 'x' is not an unsigned decimal number"},
        {"A 1 -2 g 0 0\n", ":2: A record: bytes '-2' is not an unsigned decimal number"},
        {"A 1 +2 g 0 0\n", ":2: A record: bytes '+2' is not"},
        {"A 1 18446744073709551616 g 0 0\n",
         ":2: A record: bytes '18446744073709551616' does not fit in 64 bits"},
        {"A 1 0 g 0 0\n", ":2: A record: bytes must be >= 1"},
        {"A 1 2 gpu 0 0\n", ":2: A record: dev 'gpu' must be g (GPU) or h (host)"},
        {"A 1 2 g 0 3\n", ":2: A record: ctx string id 3 is not defined"},
        {"A 1 2 g 0 0\nA 1 2 g 0 0\n", ":3: A record: storage id 1 is already live"},
        {"F 4\n", ":2: F record: storage id 4 is not live"},
        {"A 4 1 g 0 0\nF 4\nF 4\n", ":4: F record: storage id 4 is not live"},
        {"F\n", ":2: F record needs 1 field"},
        {"F 1 2\n", ":2: F record needs 1 field"},
        {"R 1 2\n", ":2: R record: storage id 1 is not live"},
        {"R 1\n", ":2: R record needs 2 fields"},
        {"E 1\n", ":2: E record takes no fields"},
        {"X 1.5\n", ":2: X record: fraction '1.5' is not a decimal in [0, 1]"},
        {"X -0.5\n", ":2: X record: fraction '-0.5'"},
        {"X 1e-1\n", ":2: X record: fraction '1e-1'"},
        {"X nan\n", ":2: X record: fraction 'nan'"},
        {"X\n", ":2: X record needs 1 field"},
        {"I 0\n", ":2: I record: iteration 0 does not follow iteration 0"},
        {"I 1\nI 1\n", ":3: I record: iteration 1 does not follow iteration 1"},
        {"I 4294967296\n", ":2: I record: iteration 4294967296"},
        {"P training\n", ":2: P record: unknown phase 'training'"},
        {"M torch\n", ":2: M record needs a key and a value"},
        {"M Torch 2.1\n", ":2: M record: key 'Torch' must match [a-z0-9_]+"},
        {"A 1 2 g 0 0\nM torch 2.1\n", ":3: M record after the first A record"},
        {"S 0 x\n", ":2: S record: string id must be >= 1"},
        {"S 1 a\nS 1 b\n", ":3: S record: string id 1 is defined twice"},
        {"S 1\n", ":2: S record needs an id and a text"},
        {"K\n", ":2: K record needs a module path and its kernel's geometry"},
        {"K  conv\n", ":2: K record needs a module path"},
        {"Z 1 0\n", ":2: Z record needs 3 fields"},
        {"A 1 2 g 0 0\nZ 1 0 3\n", ":3: Z totals disagree with the trace: Z says 1 allocs, 0 "
                                   "frees, 3 live bytes; read 1, 0, 2"},
        {"Z 0 0 0\nE\n", ":3: record after the final Z line"},
        {"A 1 2 g 0 0\r\nZ 1 0 2\n", ":2: A record: ctx '0?' is not an unsigned decimal number"},
    };
    for (const Case &c : cases)
        expect_error(H + c.trace, c.expected);
}

static void rejects_truncated_traces(void **)
{
    expect_error(H, ":1: truncated trace: it ends without the final Z line");
    expect_error(H + "A 1 2 g 0 0\n", ":2: truncated trace: it ends without the final Z line");
    expect_error(H + "A 1 2 g 0 0\nZ 1 0 2", ":3: last line does not end with a newline");
    expect_error(H + "A 1 2 g 0 0\nZ 1 0", ":3: last line does not end with a newline");
}

static void rejects_overlong_lines(void **)
{
    expect_error(H + "S 1 " + std::string(5000, 'y') + "\nZ 0 0 0\n",
                 ":2: line longer than 4096 bytes");
    expect_error(H + "S 1 " + std::string(3 << 20, 'y'), ":2: line longer than 4096 bytes");
    // 4096 bytes exactly is allowed.
    std::string line = "S 1 " + std::string(4092, 'y');
    assert_string_equal(read_compact(H + line + "\nZ 0 0 0\n").error.c_str(), "");
}

static void error_is_sticky_and_binary_is_printable(void **)
{
    std::FILE *f = file_with(H + "A 1 \x01\x02\xff g 0 0\nZ 0 0 0\n");
    auto reader = xmem::trace::CompactTraceReader::open(f, "t.xtrace");
    assert_true(reader.ok());
    xmem::trace::TraceEvent ev;
    auto first = reader.value().next(ev);
    assert_false(first.ok());
    assert_contains(first.error().message, "bytes '\?\?\?' is not an unsigned decimal number");
    auto second = reader.value().next(ev);
    assert_false(second.ok());
    assert_string_equal(first.error().message.c_str(), second.error().message.c_str());
    std::fclose(f);
}

int run_compact_reader_errors_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rejects_wrong_first_line),
        cmocka_unit_test(rejects_malformed_records),
        cmocka_unit_test(rejects_truncated_traces),
        cmocka_unit_test(rejects_overlong_lines),
        cmocka_unit_test(error_is_sticky_and_binary_is_printable),
    };
    return cmocka_run_group_tests_name("compact_reader_errors", tests, NULL, NULL);
}
