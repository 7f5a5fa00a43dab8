// Snapshot JSON reader: entries in order with their indices, bulky members skipped, and a
// one-line error (byte offset or entry index) for everything else.
#include "snapshot_helpers.h"
#include "test-list.h"

using namespace xmem::test;
using xmem::trace::SnapshotAction;

static const char *k_two_devices = R"({
  "segments": [{"address": 1, "blocks": [{"size": 3, "frames": [{"name": "x"}]}]}],
  "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1},
  "device_traces": [
    [
      {"action": "segment_alloc", "addr": 139637976727552, "size": 2097152, "stream": 0, "time_us": 1.5,
       "frames": [{"filename": "a.py", "line": 3, "name": "f", "nested": [[1, 2], {"k": null}]}]},
      {"action": "alloc", "addr": 139637976727552, "size": 40000, "stream": 0, "time_us": 2,
       "user_metadata": "", "compile_context": "N/A"},
      {"action": "free_requested", "addr": 139637976727552, "size": 40000, "stream": 0},
      {"action": "free_completed", "addr": 139637976727552, "size": 40000, "stream": 0},
      {"action": "oom", "device_free": 1024, "size": 20971520, "stream": 0},
      {"action": "snapshot", "addr": 0, "size": 0, "stream": 0}
    ],
    [
      {"stream": 18446744073709551615, "size": 512, "addr": 18446744073709551614, "action": "alloc"}
    ]
  ],
  "external_annotations": []
})";

static void reads_entries_of_every_device_in_order(void **)
{
    SnapshotOutcome r = read_snapshot_text(k_two_devices);
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.summary.devices, 2);
    assert_int_equal(r.summary.entries, 7);
    assert_int_equal(r.events.size(), 7);
    assert_int_equal(r.events[0].action, SnapshotAction::segment_alloc);
    assert_int_equal(r.events[0].addr, 139637976727552ULL);
    assert_int_equal(r.events[0].size, 2097152);
    assert_int_equal(r.events[1].action, SnapshotAction::alloc);
    assert_int_equal(r.events[1].index, 1);
    assert_int_equal(r.events[4].action, SnapshotAction::oom);
    assert_int_equal(r.events[4].device_free, 1024);
    assert_int_equal(r.events[6].device, 1);
    assert_int_equal(r.events[6].index, 0);
    assert_int_equal(r.events[6].stream, UINT64_MAX); // key order inside an entry is free
    assert_int_equal(r.events[6].addr, UINT64_MAX - 1);
    assert_int_equal(r.summary.by_action[static_cast<size_t>(SnapshotAction::alloc)], 2);
}

// torch 2.14 records torch.cuda.memory._annotate_tensor as its own entry: an allocation's
// address and text, no size; it is read and changes nothing.
static void reads_annotations(void **)
{
    SnapshotOutcome r = read_snapshot_text(R"({"device_traces": [[
      {"action": "alloc", "addr": 4096, "size": 512, "stream": 0},
      {"action": "annotate", "addr": 4096, "user_metadata": "weights", "stream": 0},
      {"action": "free_requested", "addr": 4096, "size": 512, "stream": 0}]]})");
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.events.size(), 3);
    assert_int_equal(r.events[1].action, SnapshotAction::annotate);
    assert_int_equal(r.events[1].addr, 4096);
    assert_int_equal(r.summary.by_action[static_cast<size_t>(SnapshotAction::annotate)], 1);
    r = read_snapshot_text(
        R"({"device_traces": [[{"action": "annotate", "user_metadata": "x"}]]})");
    assert_contains(r.error, "annotate entry has no 'addr'");
}

static void empty_traces_are_fine(void **)
{
    SnapshotOutcome r = read_snapshot_text(R"({"device_traces": [], "segments": []})");
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.summary.devices, 0);
}

static void reports_shape_errors_with_the_entry_index(void **)
{
    struct Case {
        const char *json;
        const char *expected;
    };
    const Case cases[] = {
        {"[]",
         "xmem: s.json: the snapshot is a JSON list, not an object: this looks like a torch 1.13"},
        {"42", "the snapshot is not a JSON object"},
        {R"({"segments": []})", "the snapshot has no 'device_traces'"},
        {R"({"device_traces": {}})", "'device_traces' is an object"},
        {R"({"device_traces": [{}]})", "device_traces[0] is an object, expected a list"},
        {R"({"device_traces": [3]})", "device_traces holds a number"},
        {R"({"device_traces": [[[]]]})", "device_traces[0][0]: entry is a list"},
        {R"({"device_traces": [[{"addr": 1, "size": 2}]]})",
         "device_traces[0][0]: entry has no 'action'"},
        {R"({"device_traces": [[{"action": "alloc", "size": 2}]]})",
         "device_traces[0][0]: alloc entry has no 'addr'"},
        {R"({"device_traces": [[{"action": "free_requested", "addr": 2}]]})",
         "free_requested entry has no 'size'"},
        {R"({"device_traces": [[{"action": "malloc", "addr": 1, "size": 2}]]})",
         "device_traces[0][0]: unknown action 'malloc'"},
        {R"({"device_traces": [[{"action": "oom", "size": 2}, {"action": "alloc", "addr": -1, "size": 2}]])",
         "device_traces[0][1]: 'addr' is a negative number"},
        {R"({"device_traces": [[{"action": "alloc", "addr": 1.5, "size": 2}]]})",
         "'addr' is a fractional number"},
        {R"({"device_traces": [[{"action": "alloc", "addr": 1, "size": "2"}]]})",
         "'size' is a string"},
        {R"({"device_traces": [[{"action": 3, "addr": 1, "size": 2}]]})", "'action' is a number"},
        {R"({"device_traces": [[{"action": "alloc", "addr": [1], "size": 2}]]})",
         "'addr' is a container"},
        {R"({"device_traces": [[{"action": "alloc", "addr": 1, "size": 1e30}]]})",
         "'size' is a fractional number"},
    };
    for (const Case &c : cases) {
        SnapshotOutcome r = read_snapshot_text(c.json);
        assert_contains(r.error, c.expected);
        assert_true(r.error.rfind("xmem: s.json: ", 0) == 0);
    }
}

static void reports_syntax_errors_with_the_byte_offset(void **)
{
    SnapshotOutcome r =
        read_snapshot_text(R"({"device_traces": [[{"action": "alloc", "addr": 1, "size": 2}]])");
    // 63 bytes of input: the missing '}' is found at byte 64, the end of input (1-based).
    assert_contains(r.error, "xmem: s.json: byte 64: malformed JSON");
    assert_int_equal(r.events.size(), 1); // entries before the damage were delivered
    r = read_snapshot_text("{\"device_traces\": [[{\"action\": \"al\x01loc\"}]]}");
    assert_contains(r.error, "malformed JSON");
    assert_true(r.error.find('\n') == std::string::npos);
    assert_true(r.error.find('\x01') == std::string::npos);
    r = read_snapshot_text("");
    assert_contains(r.error, "byte 1: malformed JSON");
    r = read_snapshot_text(R"({"device_traces": []} trailing)");
    assert_contains(r.error, "malformed JSON");
}

// The lexer is strict everywhere, in members nobody reads too: what RFC 8259 refuses is
// refused with its byte, and what it allows (escapes, UTF-8, exponents) is read.
static void strict_json_in_skipped_members(void **)
{
    // Inside a skipped member (not decoded) and as a root member's value (decoded).
    auto both = [](const std::string &value) {
        return std::vector<std::string>{"{\"frames\": [" + value + "], \"device_traces\": []}",
                                        "{\"x\": " + value + ", \"device_traces\": []}"};
    };
    const char *refused[] = {
        "01",
        "-",
        "1.",
        "1e",
        ".5",
        "+1",
        "\"\t\"",
        "\"\\x\"",
        "\"\\u12g4\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\xc0\xaf\"",
        "\"\xed\xa0\x80\"",
        "\"\xf4\x90\x80\x80\"",
        "\"\xe9\"",
        "[1,]",
        "{\"a\" 1}",
        "{\"a\":1,}",
        "{1:2}",
        "tru",
        "nul",
        "NaN",
        "[1 2]",
        "\"abc",
    };
    for (const char *value : refused) {
        for (const std::string &text : both(value)) {
            SnapshotOutcome r = read_snapshot_text(text);
            if (r.error.find("malformed JSON") == std::string::npos)
                print_error("accepted: %s\n", text.c_str());
            assert_contains(r.error, "xmem: s.json: byte ");
            assert_contains(r.error, "malformed JSON");
        }
    }
    const char *allowed[] = {
        "-0",
        "1.5e-3",
        "1E+400",
        "-12345678901234567890123",
        "\"\\\"\\/\\b\\f\\n\\r\\t\"",
        "\"\\ud83d\\ude00 \xc3\xa9 \xf0\x9f\x98\x80\"",
        "[true, false, null, {}, []]",
    };
    for (const char *value : allowed)
        for (const std::string &text : both(value))
            assert_string_equal(read_snapshot_text(text).error.c_str(), "");
    // An action spelled with escapes is decoded before it is matched.
    SnapshotOutcome r = read_snapshot_text(
        R"({"device_traces": [[{"action": "\u0061lloc", "addr": 1, "size": 2}]]})");
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.events.size(), 1);
}

static void visitor_error_stops_the_read(void **)
{
    SnapshotOutcome r = read_snapshot_text(k_two_devices, 2);
    assert_string_equal(r.error.c_str(), "xmem: stopped by the visitor");
    assert_int_equal(r.events.size(), 2);
}

static void deep_nesting_in_skipped_members_is_fine(void **)
{
    std::string deep = std::string(20000, '[') + std::string(20000, ']');
    SnapshotOutcome r = read_snapshot_text("{\"segments\": " + deep +
                                           ", \"device_traces\": [[{\"action\": "
                                           "\"alloc\", \"addr\": 1, \"size\": 2, \"frames\": " +
                                           deep + "}]]}");
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.events.size(), 1);
}

int run_snapshot_reader_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_entries_of_every_device_in_order),
        cmocka_unit_test(reads_annotations),
        cmocka_unit_test(empty_traces_are_fine),
        cmocka_unit_test(reports_shape_errors_with_the_entry_index),
        cmocka_unit_test(reports_syntax_errors_with_the_byte_offset),
        cmocka_unit_test(strict_json_in_skipped_members),
        cmocka_unit_test(visitor_error_stops_the_read),
        cmocka_unit_test(deep_nesting_in_skipped_members_is_fine),
    };
    return cmocka_run_group_tests_name("snapshot_reader", tests, NULL, NULL);
}
