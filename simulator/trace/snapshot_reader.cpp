// SAX handler for PyTorch snapshot JSON, driven by walk_json (trace/json_walk.h). The document is
// walked with a level counter (root object → device_traces list → per-device list → entry object)
// plus a skip depth for subtrees nobody needs (frames, segments, allocator_settings...).
#include "trace/snapshot_reader.h"

#include "trace/json_walk.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <iterator>
#include <memory>

namespace xmem::trace
{

namespace
{

constexpr const char *k_action_names[k_snapshot_action_count] = {
    "alloc",        "free_requested", "free_completed", "segment_alloc",
    "segment_free", "segment_map",    "segment_unmap",  "oom",
    "snapshot",     "annotate"};

// The whole input in memory: the lexer scans a contiguous buffer, and the replay holds every entry
// anyway (a partial trace is walked backwards before it is replayed). A regular file is read in one
// go into a buffer of its size; a pipe grows the buffer by doubling. The buffer is not zeroed
// first.
struct Input {
    std::unique_ptr<char[]> data;
    size_t size = 0;
};

bool read_all(std::FILE *file, Input &out)
{
    size_t capacity = 1 << 20;
    struct stat st {
    };
    long at = std::ftell(file);
    if (fstat(fileno(file), &st) == 0 && S_ISREG(st.st_mode) && at >= 0 && st.st_size >= at)
        capacity = static_cast<size_t>(st.st_size - at) + 1; // +1: see the end at once
    out.data.reset(new char[capacity]);
    for (;;) {
        out.size += std::fread(out.data.get() + out.size, 1, capacity - out.size, file);
        if (out.size < capacity)
            break;
        std::unique_ptr<char[]> bigger(new char[capacity * 2]);
        std::memcpy(bigger.get(), out.data.get(), out.size);
        out.data = std::move(bigger);
        capacity *= 2;
    }
    return !std::ferror(file);
}

std::string printable(std::string_view text, size_t limit = 60)
{
    std::string out;
    for (char c : text.substr(0, limit))
        out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return out;
}

struct Entry {
    bool has_action = false, has_addr = false, has_size = false;
    SnapshotEvent event;
};

class SnapshotSax
{
  public:
    SnapshotSax(std::string name, SnapshotVisitor &visitor)
        : m_name(std::move(name)), m_visitor(visitor)
    {
    }

    bool skipping() const { return m_skip != 0; }
    bool null() { return scalar("null"); }
    bool boolean(bool value)
    {
        if (m_segment_level && !m_skip) {
            segment_boolean(value);
            return true;
        }
        return scalar("a boolean");
    }
    bool number_integer(int64_t value)
    {
        if (m_segment_level && !m_skip) {
            segment_number(value < 0 ? 0 : static_cast<uint64_t>(value));
            return true;
        }
        if (value < 0)
            return scalar("a negative number");
        return number(static_cast<uint64_t>(value));
    }
    bool number_unsigned(uint64_t value) { return number(value); }
    bool number_float() { return scalar("a fractional number"); }
    bool string(std::string &value);
    bool start_object();
    bool key(std::string &value);
    bool end_object();
    bool start_array();
    bool end_array();
    bool syntax_error(size_t byte, const std::string &why);

    const std::string &error() const { return m_error; }
    const SnapshotSummary &summary() const { return m_summary; }
    bool saw_traces() const { return m_saw_traces; }
    bool complete() const { return m_level == 0 && m_saw_root; }

  private:
    enum Level { k_before_root = 0, k_root = 1, k_devices = 2, k_trace = 3, k_entry = 4 };
    // `segments` is walked with its own depth: list → segment → blocks list → block.
    enum SegmentLevel { k_no_segments = 0, k_segment_list, k_segment, k_block_list, k_block };
    bool segment_open(bool is_object);
    bool segment_close();
    void segment_number(uint64_t value);
    void segment_string(const std::string &value);
    void segment_boolean(bool value);

    bool fail(const std::string &what)
    {
        if (m_error.empty())
            m_error = "xmem: " + m_name + ": " + what;
        return false;
    }
    bool fail_entry(const std::string &what)
    {
        return fail("device_traces[" + std::to_string(m_summary.devices - 1) + "][" +
                    std::to_string(m_index) + "]: " + what);
    }
    bool scalar(const char *what);
    bool number(uint64_t value);
    bool finish_entry();
    bool open_container(bool is_object);

    std::string m_name;
    SnapshotVisitor &m_visitor;
    SnapshotSummary m_summary;
    std::string m_error;
    int m_level = k_before_root;
    size_t m_skip = 0; // >0 while inside an ignored subtree
    std::string m_key; // last key at root or entry level
    bool m_saw_root = false, m_saw_traces = false;
    uint64_t m_index = 0; // entry index in the current device trace
    Entry m_entry;
    int m_segment_level = k_no_segments;
    SnapshotSegment m_segment;
};

bool SnapshotSax::scalar(const char *what)
{
    if (m_skip)
        return true;
    if (m_level == k_entry &&
        (m_key == "addr" || m_key == "size" || m_key == "stream" || m_key == "device_free"))
        return fail_entry("'" + m_key + "' is " + what + ", expected an unsigned integer");
    if (m_level == k_entry && m_key == "action")
        return fail_entry(std::string("'action' is ") + what + ", expected a string");
    if (m_level == k_devices || m_level == k_trace)
        return fail(std::string("device_traces holds ") + what +
                    " where a list of trace entries was expected");
    if (m_level == k_before_root)
        return fail("the snapshot is not a JSON object (expected {\"device_traces\": ...})");
    return true;
}

bool SnapshotSax::number(uint64_t value)
{
    if (m_segment_level && !m_skip) {
        segment_number(value);
        return true;
    }
    if (m_skip || m_level != k_entry)
        return scalar("a number");
    SnapshotEvent &ev = m_entry.event;
    if (m_key == "addr") {
        ev.addr = value;
        m_entry.has_addr = true;
    } else if (m_key == "size") {
        ev.size = value;
        m_entry.has_size = true;
    } else if (m_key == "stream") {
        ev.stream = value;
    } else if (m_key == "device_free") {
        ev.device_free = value;
    } else if (m_key == "action") {
        return fail_entry("'action' is a number, expected a string");
    }
    return true;
}

bool SnapshotSax::string(std::string &value)
{
    if (m_segment_level && !m_skip) {
        segment_string(value);
        return true;
    }
    if (m_skip || m_level != k_entry)
        return scalar("a string");
    if (m_key == "action") {
        if (!parse_snapshot_action(value, m_entry.event.action))
            return fail_entry("unknown action '" + printable(value) + "'");
        m_entry.has_action = true;
        return true;
    }
    if (m_key == "addr" || m_key == "size" || m_key == "stream" || m_key == "device_free")
        return fail_entry("'" + m_key + "' is a string, expected an unsigned integer");
    return true;
}

// Containers: the expected shape advances the level; anything else is skipped whole.
bool SnapshotSax::open_container(bool is_object)
{
    if (m_skip) {
        ++m_skip;
        return true;
    }
    if (m_segment_level)
        return segment_open(is_object);
    switch (m_level) {
    case k_before_root:
        if (!is_object)
            return fail("the snapshot is a JSON list, not an object: this looks like a torch "
                        "1.13 snapshot, which has no device_traces (record with torch >= 2.0)");
        m_saw_root = true;
        m_level = k_root;
        return true;
    case k_root:
        if (m_key == "device_traces") {
            if (is_object)
                return fail("'device_traces' is an object, expected a list of per-device lists");
            m_saw_traces = true;
            m_level = k_devices;
            return true;
        }
        if (m_key == "segments" && !is_object) {
            m_segment_level = k_segment_list;
            return true;
        }
        m_skip = 1;
        return true;
    case k_devices:
        if (is_object)
            return fail("device_traces[" + std::to_string(m_summary.devices) +
                        "] is an object, expected a list of entries");
        ++m_summary.devices;
        m_index = 0;
        m_level = k_trace;
        return true;
    case k_trace:
        if (!is_object)
            return fail_entry("entry is a list, expected an object");
        m_entry = Entry{};
        m_key.clear();
        m_level = k_entry;
        return true;
    default: // nested value inside an entry (frames, user_metadata...)
        if (m_key == "addr" || m_key == "size" || m_key == "stream" || m_key == "action")
            return fail_entry("'" + m_key + "' is a container");
        m_skip = 1;
        return true;
    }
}

bool SnapshotSax::start_object()
{
    return open_container(true);
}
bool SnapshotSax::start_array()
{
    return open_container(false);
}

bool SnapshotSax::key(std::string &value)
{
    if (!m_skip)
        m_key = value;
    return true;
}

bool SnapshotSax::end_object()
{
    if (m_skip) {
        --m_skip;
        return true;
    }
    if (m_segment_level)
        return segment_close();
    if (m_level == k_entry) {
        m_level = k_trace;
        return finish_entry();
    }
    m_level = k_before_root; // the root object closed
    return true;
}

bool SnapshotSax::end_array()
{
    if (m_skip) {
        --m_skip;
        return true;
    }
    if (m_segment_level)
        return segment_close();
    m_level = m_level == k_trace ? k_devices : k_root;
    return true;
}

// Inside `segments`: unexpected shapes are skipped whole (a segment is a report, not the
// trace; the replay checks what it uses).
bool SnapshotSax::segment_open(bool is_object)
{
    bool expected = (m_segment_level == k_segment_list && is_object) ||
                    (m_segment_level == k_segment && !is_object && m_key == "blocks") ||
                    (m_segment_level == k_block_list && is_object);
    if (!expected) {
        m_skip = 1;
        return true;
    }
    if (m_segment_level == k_segment_list)
        m_segment = SnapshotSegment{};
    if (m_segment_level == k_block_list)
        m_segment.blocks.emplace_back();
    m_key.clear();
    ++m_segment_level;
    return true;
}

bool SnapshotSax::segment_close()
{
    if (m_segment_level == k_segment)
        m_visitor.on_segment(m_segment);
    --m_segment_level;
    if (m_segment_level == k_segment)
        m_key.clear();
    return true;
}

void SnapshotSax::segment_number(uint64_t value)
{
    if (m_segment_level == k_segment) {
        if (m_key == "address")
            m_segment.addr = value;
        else if (m_key == "total_size")
            m_segment.size = value;
        else if (m_key == "stream")
            m_segment.stream = value;
        else if (m_key == "device")
            m_segment.device = static_cast<uint32_t>(value);
    } else if (m_segment_level == k_block) {
        SnapshotBlock &b = m_segment.blocks.back();
        if (m_key == "address")
            b.addr = value;
        else if (m_key == "size")
            b.size = value;
        else if (m_key == "requested_size")
            b.requested_size = value;
    }
}

void SnapshotSax::segment_string(const std::string &value)
{
    if (m_segment_level == k_segment && m_key == "segment_type")
        m_segment.small = value == "small";
    if (m_segment_level == k_block && m_key == "state")
        m_segment.blocks.back().allocated = value == "active_allocated";
}

void SnapshotSax::segment_boolean(bool value)
{
    if (m_segment_level == k_segment && m_key == "is_expandable")
        m_segment.expandable = value;
}

bool SnapshotSax::finish_entry()
{
    Entry &e = m_entry;
    SnapshotAction action = e.event.action;
    if (!e.has_action)
        return fail_entry("entry has no 'action'");
    bool needs_addr = action != SnapshotAction::oom && action != SnapshotAction::snapshot;
    if (needs_addr && !e.has_addr)
        return fail_entry(std::string(snapshot_action_name(action)) + " entry has no 'addr'");
    // An annotation names an allocation and carries text (`user_metadata`); no size.
    if (!e.has_size && action != SnapshotAction::annotate)
        return fail_entry(std::string(snapshot_action_name(action)) + " entry has no 'size'");
    e.event.device = m_summary.devices - 1;
    e.event.index = m_index++;
    ++m_summary.entries;
    ++m_summary.by_action[static_cast<size_t>(action)];
    if (std::optional<Error> stop = m_visitor.on_event(e.event)) {
        m_error = stop->message;
        return false;
    }
    return true;
}

bool SnapshotSax::syntax_error(size_t byte, const std::string &why)
{
    return fail("byte " + std::to_string(byte) + ": malformed JSON: " + printable(why, 200));
}

} // namespace

const char *snapshot_action_name(SnapshotAction action)
{
    return k_action_names[static_cast<size_t>(action)];
}

bool parse_snapshot_action(std::string_view name, SnapshotAction &out)
{
    for (size_t i = 0; i < k_snapshot_action_count; ++i) {
        if (name == k_action_names[i]) {
            out = static_cast<SnapshotAction>(i);
            return true;
        }
    }
    return false;
}

Result<SnapshotSummary> read_snapshot(std::FILE *file, const std::string &name,
                                      SnapshotVisitor &visitor)
{
    Input input;
    if (!read_all(file, input))
        return Result<SnapshotSummary>::fail("xmem: " + name +
                                             ": read error: " + std::strerror(errno));
    SnapshotSax sax(name, visitor);
    bool ok = walk_json(input.data.get(), input.data.get() + input.size, sax);
    if (!ok)
        return Result<SnapshotSummary>::fail(
            sax.error().empty() ? "xmem: " + name + ": malformed JSON" : sax.error());
    if (!sax.saw_traces())
        return Result<SnapshotSummary>::fail(
            "xmem: " + name +
            ": the snapshot has no 'device_traces' (record it with "
            "torch.cuda.memory._record_memory_history() before the run)");
    return Result<SnapshotSummary>::ok(sax.summary());
}

Result<SnapshotSummary> read_snapshot(const std::string &path, SnapshotVisitor &visitor)
{
    std::FILE *file = std::fopen(path.c_str(), "rb");
    if (!file)
        return Result<SnapshotSummary>::fail("xmem: " + path +
                                             ": cannot open snapshot: " + std::strerror(errno));
    Result<SnapshotSummary> result = read_snapshot(file, path, visitor);
    std::fclose(file);
    return result;
}

} // namespace xmem::trace
