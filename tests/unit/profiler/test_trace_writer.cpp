// TraceWriter: record formatting, metadata first, atomic final file, I/O errors as values.
#include <unistd.h>

// Before test-list.h: CMocka's fail() macro would break Result<T>::fail.
#include "trace/compact_writer.h"

#include "test-list.h"
#include "trace_writer.h"

using xmem::capture::format_u64;
using xmem::capture::TraceWriter;

static void formats_integers(void **state)
{
    char buf[24];
    assert_int_equal(format_u64(0, buf), 1);
    assert_memory_equal(buf, "0", 1);
    size_t n = format_u64(18446744073709551615ull, buf);
    assert_int_equal(n, 20);
    assert_memory_equal(buf, "18446744073709551615", 20);
}

static void writes_metadata_before_events_and_z_last(void **state)
{
    std::string dir = xmem_test_temp_dir(), path = dir + "/t.trace";
    TraceWriter w;
    assert_true(w.open(path).ok());
    w.phase("setup");
    w.string_def(1, "fc|aten::addmm");
    w.alloc(1, 4000, 'g', 1);
    w.meta("torch", "1.13.1");
    w.iteration(1);
    w.alloc(2, 3072, 'h', 0);
    w.free(2);
    w.meta("steps", "1");
    w.meta("torch", "2.1.0"); // a later value replaces the earlier one
    assert_true(w.finish(2, 1, 4000).ok());
    assert_string_equal(xmem_test_read_file(path).c_str(),
                        "#xmem-trace 1\nM torch 2.1.0\nM steps 1\nP setup\nS 1 fc|aten::addmm\n"
                        "A 1 4000 g 0 1\nI 1\nA 2 3072 h 0 0\nF 2\nZ 2 1 4000\n");
    assert_int_equal(access((path + ".spool").c_str(), F_OK), -1); // spool removed
    unlink(path.c_str());
    rmdir(dir.c_str());
}

static void newlines_in_text_cannot_split_records(void **state)
{
    std::string dir = xmem_test_temp_dir(), path = dir + "/t.trace";
    TraceWriter w;
    assert_true(w.open(path).ok());
    w.meta("argv", "train.py --name a\nb");
    w.string_def(1, "x\ny");
    w.kernel("c conv\nx=1");
    assert_true(w.finish(0, 0, 0).ok());
    assert_string_equal(
        xmem_test_read_file(path).c_str(),
        "#xmem-trace 1\nM argv train.py --name a b\nS 1 x y\nK c conv x=1\nZ 0 0 0\n");
    unlink(path.c_str());
    rmdir(dir.c_str());
}

static void many_events_survive_buffer_flushes(void **state)
{
    std::string dir = xmem_test_temp_dir(), path = dir + "/t.trace";
    TraceWriter w;
    assert_true(w.open(path).ok());
    const uint64_t n = 200000; // ~4 MiB of records: several 1 MiB buffer flushes
    for (uint64_t i = 1; i <= n; ++i)
        w.alloc(i, i * 64, 'g', 0);
    for (uint64_t i = 1; i <= n; ++i)
        w.free(i);
    assert_true(w.finish(n, n, 0).ok());
    std::string text = xmem_test_read_file(path);
    size_t lines = 0;
    for (char c : text)
        lines += c == '\n';
    assert_int_equal(lines, 2 * n + 2);
    assert_true(text.find("A 200000 12800000 g 0 0\n") != std::string::npos);
    unlink(path.c_str());
    rmdir(dir.c_str());
}

static void unwritable_directory_is_a_clear_error(void **state)
{
    TraceWriter w;
    auto r = w.open("/nonexistent-dir/t.trace");
    assert_false(r.ok());
    const std::string &err = r.error().message;
    assert_true(err.rfind("xmem: /nonexistent-dir/t.trace.spool: ", 0) == 0);
    assert_true(err.find("writable") != std::string::npos);
}

static void memory_fractions_are_plain_decimals(void **state)
{
    std::string dir = xmem_test_temp_dir(), path = dir + "/t.trace";
    TraceWriter w;
    assert_true(w.open(path).ok());
    w.memory_fraction(0.5);
    w.memory_fraction(0.00001);
    w.memory_fraction(1.0);
    w.memory_fraction(2.0); // clamped: the allocator rejects a fraction above 1
    assert_true(w.finish(0, 0, 0).ok());
    assert_string_equal(xmem_test_read_file(path).c_str(),
                        "#xmem-trace 1\nX 0.5\nX 0.00001\nX 1\nX 1\nZ 0 0 0\n");
    unlink(path.c_str());
    rmdir(dir.c_str());
}

// One encoder (simulator/trace/records.h): the capture and the simulator's writer spell every
// record alike, fractions included.
static void writes_what_the_simulator_writer_writes(void **state)
{
    using xmem::trace::Device;
    using xmem::trace::Phase;
    std::string dir = xmem_test_temp_dir(), path = dir + "/t.trace", sim_path = dir + "/s.trace";
    TraceWriter w;
    assert_true(w.open(path).ok());
    w.meta("torch", "2.1.0");
    w.string_def(1, "fc|aten::addmm");
    w.kernel("fc conv x=1,3,8,8 g=1");
    w.iteration(1);
    w.phase("forward");
    w.alloc(7, 4000, 'g', 1);
    w.alloc(8, 12, 'h', 0);
    w.memory_fraction(1.0);
    w.memory_fraction(0.25);
    w.memory_fraction(0.0);
    w.empty_cache();
    w.free(8);
    assert_true(w.finish(2, 1, 4000).ok());

    auto made = xmem::trace::CompactTraceWriter::create(sim_path);
    assert_true(made.ok());
    xmem::trace::CompactTraceWriter &s = made.value();
    s.metadata("torch", "2.1.0");
    s.string(1, "fc|aten::addmm");
    s.kernel("fc conv x=1,3,8,8 g=1");
    s.iteration(1);
    s.phase(Phase::forward);
    s.alloc(7, 4000, Device::gpu, 0, 1);
    s.alloc(8, 12, Device::host, 0, 0);
    s.set_fraction(1.0);
    s.set_fraction(0.25);
    s.set_fraction(0.0);
    s.empty_cache();
    s.free(8);
    assert_true(s.finish().ok());
    assert_string_equal(xmem_test_read_file(path).c_str(), xmem_test_read_file(sim_path).c_str());
    unlink(path.c_str());
    unlink(sim_path.c_str());
    rmdir(dir.c_str());
}

static void abandon_leaves_nothing(void **state)
{
    std::string dir = xmem_test_temp_dir(), path = dir + "/t.trace";
    TraceWriter w;
    assert_true(w.open(path).ok());
    w.alloc(1, 8, 'g', 0);
    w.abandon();
    assert_int_equal(access((path + ".spool").c_str(), F_OK), -1);
    assert_int_equal(access(path.c_str(), F_OK), -1);
    assert_int_equal(rmdir(dir.c_str()), 0); // empty: nothing left behind
}

int xmem_test_group_trace_writer(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(formats_integers),
        cmocka_unit_test(writes_metadata_before_events_and_z_last),
        cmocka_unit_test(newlines_in_text_cannot_split_records),
        cmocka_unit_test(many_events_survive_buffer_flushes),
        cmocka_unit_test(unwritable_directory_is_a_clear_error),
        cmocka_unit_test(memory_fractions_are_plain_decimals),
        cmocka_unit_test(writes_what_the_simulator_writer_writes),
        cmocka_unit_test(abandon_leaves_nothing),
    };
    return cmocka_run_group_tests_name("trace_writer", tests, nullptr, nullptr);
}
