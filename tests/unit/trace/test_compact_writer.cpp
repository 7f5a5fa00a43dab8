// CompactTraceWriter: exact bytes for the format doc example, read-back of everything it
// writes, and refusal of records that would make an unreadable trace.
#include "reader_helpers.h"
#include "test-list.h"

#include "trace/compact_writer.h"

#include <algorithm>

using namespace xmem::test;
using xmem::trace::CompactTraceWriter;
using xmem::trace::Device;
using xmem::trace::Phase;

static void writes_the_format_doc_example_byte_for_byte(void **)
{
    std::FILE *f = std::tmpfile();
    {
        CompactTraceWriter w(f, "mem");
        w.metadata("torch", "1.13.1");
        w.metadata("capture", "exact");
        w.phase(Phase::setup);
        w.string(1, "fc|aten::empty");
        w.alloc(1, 4000, Device::gpu, 0, 1);
        w.alloc(2, 40, Device::gpu, 0, 1);
        w.iteration(1);
        w.phase(Phase::data);
        w.alloc(3, 3072, Device::host);
        w.alloc(4, 3072, Device::gpu);
        w.free(3);
        w.phase(Phase::forward);
        w.string(2, "fc|aten::addmm");
        w.alloc(5, 320, Device::gpu, 0, 2);
        w.free(4);
        w.free(5);
        auto done = w.finish();
        assert_true(done.ok());
        assert_int_equal(done.value(), 17); // records after the first line
    }
    assert_string_equal(read_all(f).c_str(), format_doc_example());
    std::fclose(f);
}

static void round_trips_every_record_kind(void **)
{
    std::FILE *f = std::tmpfile();
    CompactTraceWriter w(f, "mem");
    w.alloc(10, 1 << 20, Device::gpu, 7, 0);
    w.record_stream(10, 9);
    w.set_fraction(0.125);
    w.set_fraction(1.0);
    w.empty_cache();
    w.iteration(3);
    w.phase(Phase::zero_grad);
    w.free(10);
    assert_true(w.finish().ok());
    std::string text = read_all(f);
    std::fclose(f);
    assert_contains(text, "X 0.125\nX 1\nE\nI 3\nP zero_grad\n");
    ReadOutcome r = read_compact(text);
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.events.size(), 8);
    assert_int_equal(r.events[0].stream, 7);
    assert_int_equal(r.events[1].stream, 9);
    assert_true(r.events[2].fraction == 0.125);
    assert_int_equal(r.events[6].phase, Phase::zero_grad);
}

static void keeps_the_first_violation(void **)
{
    struct Case {
        void (*misuse)(CompactTraceWriter &);
        const char *expected;
    };
    const Case cases[] = {
        {[](CompactTraceWriter &w) { w.free(1); }, "free of storage id 1 that is not live"},
        {[](CompactTraceWriter &w) { w.record_stream(2, 1); }, "record_stream of storage id 2"},
        {[](CompactTraceWriter &w) { w.alloc(1, 0, Device::gpu); }, "allocation of 0 bytes"},
        {[](CompactTraceWriter &w) { w.alloc(1, 5, Device::gpu, 0, 4); },
         "ctx string id 4 is not defined"},
        {[](CompactTraceWriter &w) {
             w.alloc(1, 5, Device::gpu);
             w.alloc(1, 5, Device::gpu);
         },
         "storage id 1 is already live"},
        {[](CompactTraceWriter &w) {
             w.alloc(1, 5, Device::gpu);
             w.metadata("a", "b");
         },
         "metadata after the first allocation"},
        {[](CompactTraceWriter &w) { w.metadata("A", "b"); }, "metadata key must match"},
        {[](CompactTraceWriter &w) { w.metadata("a", "b\nc"); },
         "metadata value contains a newline"},
        {[](CompactTraceWriter &w) { w.string(0, "x"); }, "string id 0 is 0 or defined twice"},
        {[](CompactTraceWriter &w) { w.string(1, "x\n"); }, "string text contains a newline"},
        {[](CompactTraceWriter &w) { w.set_fraction(1.5); }, "memory fraction outside [0, 1]"},
        {[](CompactTraceWriter &w) {
             w.iteration(2);
             w.iteration(2);
         },
         "iteration 2 does not follow 2"},
    };
    for (const Case &c : cases) {
        std::FILE *f = std::tmpfile();
        CompactTraceWriter w(f, "mem");
        c.misuse(w);
        w.free(99); // a later violation must not replace the first
        auto done = w.finish();
        assert_false(done.ok());
        assert_contains(done.error().message,
                        std::string("xmem: mem: trace writer: ") + c.expected);
        std::fclose(f);
    }
}

// The encoder and the table of record shapes (trace/records.h) agree: each record's letter
// and number of fields, the rest-of-line text of M, S and K counted as one.
static void the_encoder_writes_the_shape_table(void **)
{
    using xmem::trace::Record;
    xmem::trace::StringSink sink;
    xmem::trace::RecordEncoder<xmem::trace::StringSink> e(sink);
    e.metadata("key", "value");
    e.string(1, "text");
    e.kernel("module kind");
    e.iteration(1);
    e.phase("data");
    e.alloc(1, 2, 'g', 3, 4);
    e.free(1);
    e.record_stream(1, 2);
    e.empty_cache();
    e.fraction(0.5);
    e.totals(1, 2, 3);
    size_t at = 0;
    for (const auto &shape : xmem::trace::k_record_shapes) {
        size_t end = sink.text.find('\n', at);
        assert_true(end != std::string::npos);
        std::string line = sink.text.substr(at, end - at);
        at = end + 1;
        assert_int_equal(line[0], xmem::trace::letter(shape.record));
        size_t spaces = static_cast<size_t>(std::count(line.begin(), line.end(), ' '));
        assert_int_equal(spaces, shape.fields);
    }
    assert_int_equal(at, sink.text.size());
}

static void create_reports_unwritable_paths(void **)
{
    auto w = CompactTraceWriter::create("/nonexistent-dir/x.xtrace");
    assert_false(w.ok());
    assert_contains(w.error().message, "xmem: /nonexistent-dir/x.xtrace: cannot create trace");
}

int run_compact_writer_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writes_the_format_doc_example_byte_for_byte),
        cmocka_unit_test(round_trips_every_record_kind),
        cmocka_unit_test(keeps_the_first_violation),
        cmocka_unit_test(the_encoder_writes_the_shape_table),
        cmocka_unit_test(create_reports_unwritable_paths),
    };
    return cmocka_run_group_tests_name("compact_writer", tests, NULL, NULL);
}
