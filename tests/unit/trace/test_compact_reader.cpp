// CompactTraceReader on valid input: every field of every record kind, metadata and
// strings, the FILE* and path entry points.
#include "reader_helpers.h"
#include "test-list.h"

#include "trace/compact_writer.h"

#include <unistd.h>

using namespace xmem::test;
using xmem::trace::CompactTraceReader;
using xmem::trace::Device;
using xmem::trace::EventKind;
using xmem::trace::Phase;
using xmem::trace::TraceEvent;

static void reads_the_format_doc_example(void **)
{
    ReadOutcome r = read_compact(format_doc_example());
    assert_string_equal(r.error.c_str(), "");
    // P setup, A, A, I, P data, A, A, F, P forward, A, F, F = 12 events (M S Z absorbed).
    assert_int_equal(r.events.size(), 12);
    const TraceEvent &first = r.events[1];
    assert_int_equal(first.kind, EventKind::alloc);
    assert_int_equal(first.id, 1);
    assert_int_equal(first.bytes, 4000);
    assert_int_equal(first.dev, Device::gpu);
    assert_int_equal(first.ctx, 1);
    assert_int_equal(first.iteration, 0);
    assert_int_equal(first.phase, Phase::setup);
    assert_int_equal(first.line, 6);
    assert_int_equal(r.events[3].kind, EventKind::iteration);
    assert_int_equal(r.events[3].iteration, 1);
    const TraceEvent &host = r.events[5];
    assert_int_equal(host.dev, Device::host);
    assert_int_equal(host.phase, Phase::data);
    assert_int_equal(host.iteration, 1);
    const TraceEvent &free_host = r.events[7];
    assert_int_equal(free_host.kind, EventKind::free);
    assert_int_equal(free_host.id, 3);
    assert_int_equal(free_host.bytes, 3072); // the reader fills in the freed storage
    assert_int_equal(free_host.dev, Device::host);
    assert_int_equal(r.events[11].kind, EventKind::free);
    assert_int_equal(r.events[11].line, 17);
}

static void exposes_metadata_strings_and_totals(void **)
{
    std::FILE *f = file_with(format_doc_example());
    auto opened = CompactTraceReader::open(f, "doc");
    assert_true(opened.ok());
    CompactTraceReader &reader = opened.value();
    // Header metadata is known before the first event.
    assert_non_null(reader.metadata_value("torch"));
    assert_string_equal(reader.metadata_value("torch")->c_str(), "1.13.1");
    assert_null(reader.metadata_value("amp"));
    assert_null(reader.string_text(1)); // defined after `P setup`, so not part of the header
    TraceEvent ev;
    while (reader.next(ev).value()) {
    }
    assert_string_equal(reader.string_text(1)->c_str(), "fc|aten::empty");
    assert_string_equal(reader.string_text(2)->c_str(), "fc|aten::addmm");
    assert_int_equal(reader.metadata().size(), 2);
    assert_int_equal(reader.allocs(), 5);
    assert_int_equal(reader.frees(), 3);
    assert_int_equal(reader.live_bytes(), 4040);
    assert_int_equal(reader.live_count(), 2);
    assert_false(reader.next(ev).value()); // stays at the end
    std::fclose(f);
}

static void reads_record_stream_empty_cache_and_fraction(void **)
{
    ReadOutcome r =
        read_compact("#xmem-trace 1\nA 7 100 g 0 0\nR 7 3\nX 0.25\nE\nX 1\nX 0\nF 7\nZ 1 1 0\n");
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.events.size(), 7);
    assert_int_equal(r.events[1].kind, EventKind::record_stream);
    assert_int_equal(r.events[1].stream, 3);
    assert_int_equal(r.events[1].bytes, 100);
    assert_int_equal(r.events[2].kind, EventKind::set_fraction);
    assert_true(r.events[2].fraction == 0.25);
    assert_int_equal(r.events[3].kind, EventKind::empty_cache);
    assert_true(r.events[4].fraction == 1.0);
    assert_int_equal(r.events[6].stream, 0); // free reports the allocation stream
}

static void empty_metadata_value_and_large_numbers(void **)
{
    ReadOutcome r =
        read_compact("#xmem-trace 1\nM argv \nA 18446744073709551615 18446744073709551615 g "
                     "18446744073709551615 0\nZ 1 0 18446744073709551615\n");
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.events[0].id, UINT64_MAX);
    assert_int_equal(r.events[0].stream, UINT64_MAX);
}

static void keeps_kernel_records_anywhere(void **)
{
    std::FILE *f = file_with("#xmem-trace 1\nK c1 conv x=2,3,8,8 w=4,3,3,3\nA 1 2 g 0 0\n"
                             "K c2 conv x=1\nF 1\nZ 1 1 0\n");
    auto opened = CompactTraceReader::open(f, "k");
    assert_true(opened.ok());
    CompactTraceReader &reader = opened.value();
    TraceEvent ev;
    int events = 0;
    while (reader.next(ev).value())
        ++events;
    assert_int_equal(events, 2); // K carries no event
    assert_int_equal(reader.kernels().size(), 2);
    assert_string_equal(reader.kernels()[0].c_str(), "c1 conv x=2,3,8,8 w=4,3,3,3");
    assert_string_equal(reader.kernels()[1].c_str(), "c2 conv x=1");
    std::fclose(f);
}

static void opens_a_path_and_reports_missing_files(void **)
{
    char path[] = "/tmp/xmem-test-trace-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    std::string text = format_doc_example();
    assert_int_equal(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fd);
    auto reader = CompactTraceReader::open(path);
    assert_true(reader.ok());
    assert_string_equal(reader.value().name().c_str(), path);
    unlink(path);
    auto missing = CompactTraceReader::open(std::string(path) + ".none");
    assert_false(missing.ok());
    assert_contains(missing.error().message, "cannot open trace: No such file");
    assert_contains(missing.error().message, "xmem: /tmp/xmem-test-trace-");
}

static void lines_longer_than_a_buffer_boundary_read_correctly(void **)
{
    // 300k allocations cross many 1 MiB buffer refills; totals must still agree.
    std::string text = "#xmem-trace 1\n";
    std::string long_text(4000, 'x');
    text += "S 1 " + long_text + "\n";
    for (int i = 1; i <= 300000; ++i)
        text += "A " + std::to_string(i) + " " + std::to_string(i) + " g 0 1\n";
    uint64_t total = 300000ULL * 300001ULL / 2;
    text += "Z 300000 0 " + std::to_string(total) + "\n";
    ReadOutcome r = read_compact(text);
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.events.size(), 300000);
    assert_int_equal(r.events.back().line, 300002);
}

int run_compact_reader_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_the_format_doc_example),
        cmocka_unit_test(exposes_metadata_strings_and_totals),
        cmocka_unit_test(reads_record_stream_empty_cache_and_fraction),
        cmocka_unit_test(empty_metadata_value_and_large_numbers),
        cmocka_unit_test(keeps_kernel_records_anywhere),
        cmocka_unit_test(opens_a_path_and_reports_missing_files),
        cmocka_unit_test(lines_longer_than_a_buffer_boundary_read_correctly),
    };
    return cmocka_run_group_tests_name("compact_reader", tests, NULL, NULL);
}
