// Streaming reader of PyTorch 2.x memory snapshots exported to JSON
// (allocator.md 13: {"segments": [...], "device_traces": [[{action, addr, size, stream,
// time_us, frames?}, ...], ...]}). Snapshots reach hundreds of MB, so the file is walked
// SAX-style by a strict lexer of its own (trace/json_walk.h) and every device_traces entry is
// handed to a visitor as it is read; `segments` (the final state) is handed over segment by
// segment, without the blocks' `frames`; any other bulky member is skipped without being built.
//
// Errors are one line: "xmem: FILE: byte N: <syntax error>" for malformed JSON and
// "xmem: FILE: device_traces[D][I]: <what>" for a well-formed but wrong entry.
#pragma once

#include "common/result.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xmem::trace
{

enum class SnapshotAction : uint8_t {
    alloc,          // block handed out; size = requested bytes
    free_requested, // user free; size = requested bytes
    free_completed, // block back in its pool
    segment_alloc,  // cudaMalloc of a segment; size = segment bytes
    segment_free,
    segment_map, // expandable segment pages mapped
    segment_unmap,
    oom,      // size = rounded request, device_free = free bytes on the device
    snapshot, // marker
    annotate, // 2.14+: metadata attached to a live allocation (addr); no memory changes
};
constexpr size_t k_snapshot_action_count = 10;

const char *snapshot_action_name(SnapshotAction action);
bool parse_snapshot_action(std::string_view name, SnapshotAction &out);

struct SnapshotEvent {
    SnapshotAction action = SnapshotAction::alloc;
    uint32_t device = 0; // index into device_traces
    uint64_t index = 0;  // 0-based entry index within that device's trace
    uint64_t addr = 0;
    uint64_t size = 0;
    uint64_t stream = 0;
    uint64_t device_free = 0; // oom only
};

// One block of the snapshot's final `segments` (state: active_allocated, active_pending_free,
// inactive).
struct SnapshotBlock {
    uint64_t addr = 0;
    uint64_t size = 0;
    uint64_t requested_size = 0;
    bool allocated = false; // state "active_allocated"
};
// One entry of `segments`: the allocator's state when the snapshot was taken.
struct SnapshotSegment {
    uint32_t device = 0;
    uint64_t addr = 0;
    uint64_t size = 0;
    uint64_t stream = 0;
    bool small = false; // segment_type "small"
    bool expandable = false;
    std::vector<SnapshotBlock> blocks;
};

class SnapshotVisitor
{
  public:
    virtual ~SnapshotVisitor() = default;
    // Return an Error to stop reading; its message is passed through unchanged.
    virtual std::optional<Error> on_event(const SnapshotEvent &event) = 0;
    // One entry of `segments`, in file order (before or after the traces, as the file has it).
    virtual void on_segment(const SnapshotSegment &segment) { (void)segment; }
};

struct SnapshotSummary {
    uint32_t devices = 0; // length of device_traces
    uint64_t entries = 0; // entries on all devices
    std::array<uint64_t, k_snapshot_action_count> by_action{};
};

Result<SnapshotSummary> read_snapshot(std::FILE *file, const std::string &name,
                                      SnapshotVisitor &visitor);
Result<SnapshotSummary> read_snapshot(const std::string &path, SnapshotVisitor &visitor);

} // namespace xmem::trace
