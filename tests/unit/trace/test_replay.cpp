// Replay of both formats through the real allocator simulator. Expected values are worked
// out by hand from allocator.md 4 and 16 (2.6 defaults), not taken from a run.
#include "reader_helpers.h"
#include "test-list.h"

#include "cli/replay.h"
#include "trace/compact_writer.h"

#include <memory>

using namespace xmem::test;
using xmem::cli::ReplayReport;
using xmem::trace::Device;
using xmem::trace::Phase;

namespace
{

constexpr uint64_t MiB = 1 << 20;

std::unique_ptr<xmem::sim::DeviceCachingAllocator> allocator_for(const char *torch,
                                                                 uint64_t capacity = 0)
{
    auto version = xmem::sim::TorchVersion::parse(torch);
    assert_true(version.ok());
    auto config = xmem::sim::AllocatorConfig::defaults(version.value());
    config.device_total_bytes = capacity;
    return std::make_unique<xmem::sim::DeviceCachingAllocator>(config);
}

int64_t stat(const xmem::sim::DeviceCachingAllocator &a, const char *key)
{
    int64_t value = -1;
    assert_true(a.stats().get(key, &value));
    return value;
}

ReplayReport replay_text(const std::string &text, xmem::sim::DeviceCachingAllocator &a,
                         xmem::timeline::TimelineRecorder *t = nullptr)
{
    std::FILE *f = file_with(text);
    auto reader = xmem::trace::CompactTraceReader::open(f, "r.xtrace");
    assert_true(reader.ok());
    auto r = xmem::cli::replay_compact(reader.value(), a, t);
    std::fclose(f);
    if (!r.ok())
        print_error("%s\n", r.error().message.c_str());
    assert_true(r.ok());
    return r.value();
}

std::string write_trace(void (*body)(xmem::trace::CompactTraceWriter &))
{
    std::FILE *f = std::tmpfile();
    xmem::trace::CompactTraceWriter w(f, "mem");
    body(w);
    assert_true(w.finish().ok());
    std::string text = read_all(f);
    std::fclose(f);
    return text;
}

} // namespace

static void compact_replays_gpu_storages_only(void **)
{
    std::string text = write_trace([](xmem::trace::CompactTraceWriter &w) {
        w.alloc(1, 40000, Device::gpu);    // 40,448 B, new 2 MiB segment (allocator.md 16)
        w.alloc(2, 1 << 30, Device::host); // stays on the host: not replayed
        w.alloc(3, 5 * MiB, Device::gpu);  // 20 MiB segment, 5 MiB block (allocator.md 16)
        w.free(1);
        w.free(2);
        w.iteration(1);
        w.phase(Phase::forward);
    });
    auto a = allocator_for("2.6");
    xmem::timeline::TimelineRecorder t;
    ReplayReport r = replay_text(text, *a, &t);
    assert_int_equal(r.events, 7);
    assert_int_equal(r.gpu_calls, 3);
    assert_false(r.oom.has_value());
    assert_int_equal(stat(*a, "allocated_bytes.all.peak"), 40448 + 5 * MiB);
    assert_int_equal(stat(*a, "allocated_bytes.all.current"), 5 * MiB);
    assert_int_equal(stat(*a, "reserved_bytes.all.peak"), 22 * MiB);
    assert_int_equal(stat(*a, "segment.all.current"), 2);
    assert_int_equal(t.peak_reserved().value, 22 * MiB);
    assert_int_equal(t.peak_reserved().event, 2);
    assert_int_equal(t.markers().size(), 2);
    assert_string_equal(t.markers()[0].label.c_str(), "step 1");
    assert_string_equal(t.markers()[1].label.c_str(), "forward");
}

static void compact_replay_stops_at_the_first_oom(void **)
{
    std::string text = write_trace([](xmem::trace::CompactTraceWriter &w) {
        w.alloc(1, 30 * MiB, Device::gpu); // 30 MiB segment
        w.alloc(2, 5 * MiB, Device::gpu);  // needs a 20 MiB segment: 50 MiB > 40 MiB
        w.alloc(3, 1, Device::gpu);
    });
    auto a = allocator_for("2.6", 40 * MiB);
    ReplayReport r = replay_text(text, *a);
    assert_true(r.oom.has_value());
    assert_int_equal(r.oom->event, 1);
    assert_int_equal(r.oom->line, 3);
    assert_int_equal(r.oom->size, 5 * MiB);
    assert_int_equal(r.oom->alloc_size, 20 * MiB);
    assert_contains(r.oom->message, "Tried to allocate 20.00 MiB");
    assert_int_equal(r.events, 2);
}

static void compact_replay_passes_stream_use_and_cache_calls(void **)
{
    // Used on stream 5 and freed: allocated drops, but the block stays active until the
    // stream's work completes (allocator.md 5.1, 5.2), which no later malloc triggers here.
    std::string pending = write_trace([](xmem::trace::CompactTraceWriter &w) {
        w.alloc(1, 1000, Device::gpu);
        w.record_stream(1, 5);
        w.free(1);
    });
    auto a = allocator_for("2.6", 80 * MiB);
    ReplayReport r = replay_text(pending, *a);
    assert_int_equal(r.gpu_calls, 3);
    assert_int_equal(stat(*a, "allocated_bytes.all.current"), 0);
    assert_int_equal(stat(*a, "active.all.current"), 1);
    // empty_cache synchronises, completes the free and releases the 2 MiB segment
    // (allocator.md 4.11).
    std::string flushed = pending.substr(0, pending.rfind("Z ")) + "E\nX 0.5\nZ 1 1 0\n";
    auto b = allocator_for("2.6", 80 * MiB);
    r = replay_text(flushed, *b);
    assert_int_equal(r.gpu_calls, 5);
    assert_int_equal(stat(*b, "active.all.current"), 0);
    assert_int_equal(stat(*b, "reserved_bytes.all.current"), 0);
    assert_int_equal(stat(*b, "reserved_bytes.all.peak"), 2 * MiB);
}

static const char *k_snapshot = R"({"device_traces": [[
  {"action": "segment_alloc", "addr": 139637976727552, "size": 2097152, "stream": 0},
  {"action": "alloc", "addr": 139637976727552, "size": 40000, "stream": 0},
  {"action": "alloc", "addr": 139637976768000, "size": 512, "stream": 0},
  {"action": "free_requested", "addr": 139637976727552, "size": 40000, "stream": 0},
  {"action": "free_completed", "addr": 139637976727552, "size": 40000, "stream": 0},
  {"action": "segment_alloc", "addr": 139637978824704, "size": SECOND, "stream": 0},
  {"action": "alloc", "addr": 139637978824704, "size": 5242880, "stream": 0},
  {"action": "free_requested", "addr": 1, "size": 8, "stream": 0}
]]})";

static ReplayReport replay_snapshot_text(const std::string &json, bool verify,
                                         xmem::sim::DeviceCachingAllocator &a)
{
    std::FILE *f = file_with(json);
    auto r = xmem::cli::replay_snapshot(f, "s.json", {0, verify}, a, nullptr);
    std::fclose(f);
    if (!r.ok())
        print_error("%s\n", r.error().message.c_str());
    assert_true(r.ok());
    return r.value();
}

static std::string snapshot_with_second_segment(const char *size)
{
    std::string json = k_snapshot;
    json.replace(json.find("SECOND"), 6, size);
    return json;
}

static void snapshot_verify_matches_a_consistent_trace(void **)
{
    auto a = allocator_for("2.6");
    ReplayReport r = replay_snapshot_text(snapshot_with_second_segment("20971520"), true, *a);
    assert_int_equal(r.events, 8);
    assert_int_equal(r.unknown_frees, 1); // the block at 0x1 predates recording
    assert_int_equal(r.real_reserved_peak, 22 * MiB);
    assert_int_equal(stat(*a, "reserved_bytes.all.peak"), 22 * MiB);
    // 40000 → 40448 and 512 (both in the first segment), then 5 MiB.
    // 40448 + 512 live, 40448 freed, then 5 MiB: peak 5 MiB + 512.
    assert_int_equal(stat(*a, "allocated_bytes.all.peak"), 5 * MiB + 512);
    assert_true(r.verify.ran);
    assert_false(r.verify.diverged);
    assert_int_equal(r.verify.compared, 2);
}

static void snapshot_verify_reports_the_divergence(void **)
{
    auto a = allocator_for("2.6");
    ReplayReport r = replay_snapshot_text(snapshot_with_second_segment("2097152"), true, *a);
    assert_true(r.verify.diverged);
    assert_int_equal(r.verify.compared, 1);
    assert_int_equal(r.verify.divergence_event, 5);
    assert_int_equal(r.verify.expected->size, 2 * MiB);
    assert_int_equal(r.verify.got->size, 20 * MiB);
    assert_int_equal(r.verify.got->event, 6);
}

static void snapshot_verify_compares_block_addresses(void **)
{
    // The second block of the segment is really 512 B further than the simulator puts it.
    const char *json = R"({"device_traces": [[
      {"action": "segment_alloc", "addr": 4194304, "size": 2097152, "stream": 0},
      {"action": "alloc", "addr": 4194304, "size": 100, "stream": 0},
      {"action": "alloc", "addr": 4195328, "size": 100, "stream": 0}
    ]]})";
    auto a = allocator_for("2.6");
    ReplayReport r = replay_snapshot_text(json, true, *a);
    assert_true(r.verify.diverged);
    assert_string_equal(r.verify.kind.c_str(), "block");
    assert_int_equal(r.verify.blocks_matched, 1);
    assert_int_equal(r.verify.divergence_event, 2);
    assert_int_equal(r.verify.expected->addr, 4195328);
    assert_int_equal(r.verify.got->addr, 4194304 + 512);
    assert_int_equal(r.verify.pool_state.size(), 1);
    assert_contains(r.verify.pool_state[0], "segment 0x400000 2097152 B small stream 0:");
}

static std::string snapshot_with_oom(const char *device_free)
{
    std::string json = R"({"device_traces": [[
      {"action": "segment_alloc", "addr": 41943040, "size": 20971520, "stream": 0},
      {"action": "alloc", "addr": 41943040, "size": 20971520, "stream": 0},
      {"action": "oom", "size": 20971520, "stream": 0, "device_free": FREE}
    ]]})";
    json.replace(json.find("FREE"), 4, device_free);
    return json;
}

static void snapshot_verify_replays_a_recorded_oom(void **)
{
    auto a = allocator_for("2.6");
    ReplayReport r = replay_snapshot_text(snapshot_with_oom("1048576"), true, *a);
    assert_false(r.verify.diverged);
    assert_int_equal(r.real_ooms, 1);
    assert_int_equal(r.verify.ooms_matched, 1);
    assert_false(r.oom.has_value()); // a recorded OOM does not stop the replay
    // With 40 MiB free the simulator can serve the request: that is a divergence.
    auto b = allocator_for("2.6");
    r = replay_snapshot_text(snapshot_with_oom("41943040"), true, *b);
    assert_true(r.verify.diverged);
    assert_string_equal(r.verify.kind.c_str(), "oom");
    assert_int_equal(r.verify.divergence_event, 2);
    assert_int_equal(stat(*b, "allocated_bytes.all.current"), 20 * MiB); // freed again
}

static void snapshot_verify_compares_the_peaks(void **)
{
    auto a = allocator_for("2.6");
    ReplayReport r = replay_snapshot_text(snapshot_with_second_segment("20971520"), true, *a);
    assert_int_equal(r.verify.peaks_matched, 2);
    assert_int_equal(r.real_requested_peak, 512 + 5 * MiB); // the 40000 B block is freed first
}

static void snapshot_segment_free_means_empty_cache(void **)
{
    const char *json = R"({"device_traces": [[
      {"action": "segment_alloc", "addr": 4194304, "size": 2097152, "stream": 0},
      {"action": "alloc", "addr": 4194304, "size": 100, "stream": 0},
      {"action": "free_requested", "addr": 4194304, "size": 100, "stream": 0},
      {"action": "free_completed", "addr": 4194304, "size": 100, "stream": 0},
      {"action": "segment_free", "addr": 4194304, "size": 2097152, "stream": 0}
    ]]})";
    auto a = allocator_for("2.6");
    ReplayReport r = replay_snapshot_text(json, true, *a);
    assert_false(r.verify.diverged);
    assert_int_equal(r.verify.compared, 2);
    assert_int_equal(stat(*a, "reserved_bytes.all.current"), 0);
}

// Expandable segments: the reservation takes the recorded base, and a recorded segment_unmap
// of pages the simulator still maps means empty_cache() (it has no trace action of its own).
static void snapshot_segment_unmap_means_empty_cache(void **)
{
    const char *json = R"({"device_traces": [[
      {"action": "segment_map", "addr": 140000000000000, "size": 20971520, "stream": 0},
      {"action": "alloc", "addr": 140000000000000, "size": 3145728, "stream": 0},
      {"action": "free_requested", "addr": 140000000000000, "size": 3145728, "stream": 0},
      {"action": "free_completed", "addr": 140000000000000, "size": 3145728, "stream": 0},
      {"action": "segment_unmap", "addr": 140000000000000, "size": 20971520, "stream": 0},
      {"action": "segment_map", "addr": 140000000000000, "size": 20971520, "stream": 0},
      {"action": "alloc", "addr": 140000000000000, "size": 1048577, "stream": 0}
    ]]})";
    auto version = xmem::sim::TorchVersion::parse("2.6");
    auto config = xmem::sim::AllocatorConfig::parse("expandable_segments:True", version.value());
    assert_true(config.ok());
    xmem::sim::DeviceCachingAllocator a(config.value());
    ReplayReport r = replay_snapshot_text(json, true, a);
    if (r.verify.diverged)
        print_error("diverged (%s) at %d\n", r.verify.kind.c_str(),
                    static_cast<int>(r.verify.divergence_event));
    assert_false(r.verify.diverged);
    assert_int_equal(r.verify.blocks_matched, 2);
    assert_int_equal(r.verify.compared, 3);
    assert_int_equal(stat(a, "reserved_bytes.all.current"), 20 * MiB);
    assert_int_equal(stat(a, "reserved_bytes.all.peak"), 20 * MiB);
}

// Recording began with a 2 MiB block (still live at the end) and a 3 MiB one (freed during
// the recording) in a 20 MiB segment: the state at entry 0 is rebuilt from `segments`.
static void snapshot_partial_trace_is_rebuilt_from_the_final_segments(void **)
{
    const char *json = R"({"device_traces": [[
      {"action": "free_requested", "addr": 1075838976, "size": 3145728, "stream": 0},
      {"action": "free_completed", "addr": 1075838976, "size": 3145728, "stream": 0},
      {"action": "alloc", "addr": 1075838976, "size": 4194304, "stream": 0}
    ]], "segments": [
      {"device": 0, "address": 1073741824, "total_size": 20971520, "stream": 0,
       "segment_type": "large", "is_expandable": false, "blocks": [
        {"address": 1073741824, "size": 2097152, "requested_size": 2097152,
         "state": "active_allocated", "frames": [{"name": "f", "line": 1}]},
        {"address": 1075838976, "size": 4194304, "requested_size": 4194304,
         "state": "active_allocated"},
        {"address": 1080033280, "size": 14680064, "requested_size": 0, "state": "inactive"}]}
    ]})";
    auto a = allocator_for("2.6");
    ReplayReport r = replay_snapshot_text(json, true, *a);
    assert_true(r.partial);
    assert_contains(r.rebuild, "rebuilt the state at entry 0 from the final segments: 1 segments "
                               "(20971520 B), 2 live blocks (5242880 B requested)");
    // Freed and merged before anything landed after it: its unsplit tail is unknown.
    assert_contains(r.rebuild, ", 1 undetermined, replayed at their minimum: 0x40200000: "
                               "3145728..4194304 B");
    assert_int_equal(r.undetermined_sizes.size(), 1);
    assert_int_equal(r.undetermined_sizes[0].max, 4 * MiB);
    assert_false(r.verify.diverged);
    assert_int_equal(r.verify.blocks_matched, 1);
    assert_int_equal(r.verify.peaks_matched, 2);
    assert_int_equal(r.unknown_frees, 0);
    assert_int_equal(r.real_reserved_peak, 20 * MiB);
    assert_int_equal(r.real_requested_peak, 6 * MiB);
    assert_int_equal(stat(*a, "allocated_bytes.all.current"), 6 * MiB);
    assert_true(a->check_invariants().ok());
}

// The 3 MiB block freed during the recording had a 512 KiB unsplit tail: the 2 MiB block
// allocated while it was live begins 3.5 MiB after it. Replayed at 3 MiB, that block would
// land 512 KiB too low.
static void snapshot_partial_trace_sizes_a_block_from_a_later_alloc(void **)
{
    const char *json = R"({"device_traces": [[
      {"action": "alloc", "addr": 1079508992, "size": 2097152, "stream": 0},
      {"action": "free_requested", "addr": 1075838976, "size": 3145728, "stream": 0},
      {"action": "free_completed", "addr": 1075838976, "size": 3145728, "stream": 0}
    ]], "segments": [
      {"device": 0, "address": 1073741824, "total_size": 20971520, "stream": 0,
       "segment_type": "large", "is_expandable": false, "blocks": [
        {"address": 1073741824, "size": 2097152, "requested_size": 2097152,
         "state": "active_allocated"},
        {"address": 1075838976, "size": 3670016, "requested_size": 0, "state": "inactive"},
        {"address": 1079508992, "size": 2097152, "requested_size": 2097152,
         "state": "active_allocated"},
        {"address": 1081606144, "size": 13107200, "requested_size": 0, "state": "inactive"}]}
    ]})";
    auto a = allocator_for("2.6");
    ReplayReport r = replay_snapshot_text(json, true, *a);
    assert_false(r.verify.diverged); // at 3 MiB, the alloc lands at 0x40500000
    assert_contains(r.rebuild, "2 live blocks (5242880 B requested), 1 block sizes inferred (split "
                               "rule, later allocations)");
    assert_true(r.undetermined_sizes.empty());
    assert_int_equal(r.verify.blocks_matched, 1);
    assert_true(a->check_invariants().ok());
}

static void snapshot_partial_trace_with_expandable_segments_says_why(void **)
{
    const char *json = R"({"device_traces": [[
      {"action": "free_requested", "addr": 1073741824, "size": 3145728, "stream": 0}
    ]], "segments": [
      {"device": 0, "address": 1073741824, "total_size": 20971520, "stream": 0,
       "segment_type": "large", "is_expandable": true, "blocks": [
        {"address": 1073741824, "size": 20971520, "requested_size": 0, "state": "inactive"}]}
    ]})";
    auto a = allocator_for("2.6");
    ReplayReport r = replay_snapshot_text(json, false, *a);
    assert_true(r.partial);
    assert_contains(r.rebuild, "cannot rebuild the state at entry 0: it uses expandable segments: "
                               "the snapshot gives neither the base nor the size");
    assert_true(r.rebuild.find('\n') == std::string::npos);
    assert_int_equal(r.unknown_frees, 1);
}

static void snapshot_partial_trace_without_segments_says_why(void **)
{
    const char *json = R"({"device_traces": [[
      {"action": "free_requested", "addr": 1075838976, "size": 3145728, "stream": 0}
    ]]})";
    auto a = allocator_for("2.6");
    ReplayReport r = replay_snapshot_text(json, false, *a);
    assert_true(r.partial);
    assert_contains(r.rebuild, "cannot rebuild the state at entry 0: the snapshot frees blocks "
                               "allocated before recording began but has no 'segments'");
}

static void snapshot_replay_reports_a_bad_device_index(void **)
{
    auto a = allocator_for("2.6");
    std::FILE *f = file_with(R"({"device_traces": [[]]})");
    auto r = xmem::cli::replay_snapshot(f, "s.json", {3, false}, *a, nullptr);
    std::fclose(f);
    assert_false(r.ok());
    assert_contains(r.error().message,
                    "xmem: s.json: --device 3 but the snapshot has 1 device trace(s)");
}

int run_replay_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compact_replays_gpu_storages_only),
        cmocka_unit_test(compact_replay_stops_at_the_first_oom),
        cmocka_unit_test(compact_replay_passes_stream_use_and_cache_calls),
        cmocka_unit_test(snapshot_verify_matches_a_consistent_trace),
        cmocka_unit_test(snapshot_verify_reports_the_divergence),
        cmocka_unit_test(snapshot_verify_compares_block_addresses),
        cmocka_unit_test(snapshot_verify_replays_a_recorded_oom),
        cmocka_unit_test(snapshot_verify_compares_the_peaks),
        cmocka_unit_test(snapshot_segment_free_means_empty_cache),
        cmocka_unit_test(snapshot_segment_unmap_means_empty_cache),
        cmocka_unit_test(snapshot_partial_trace_is_rebuilt_from_the_final_segments),
        cmocka_unit_test(snapshot_partial_trace_sizes_a_block_from_a_later_alloc),
        cmocka_unit_test(snapshot_partial_trace_with_expandable_segments_says_why),
        cmocka_unit_test(snapshot_partial_trace_without_segments_says_why),
        cmocka_unit_test(snapshot_replay_reports_a_bad_device_index),
    };
    return cmocka_run_group_tests_name("replay", tests, NULL, NULL);
}
