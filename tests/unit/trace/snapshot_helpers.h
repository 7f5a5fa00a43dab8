// Collects the events a snapshot read hands out, or its error.
#pragma once

#include "test_helpers.h"

#include "trace/snapshot_reader.h"

#include <vector>

namespace xmem::test
{

struct Collect : xmem::trace::SnapshotVisitor {
    std::vector<xmem::trace::SnapshotEvent> events;
    size_t stop_after = SIZE_MAX;
    std::optional<xmem::Error> on_event(const xmem::trace::SnapshotEvent &ev) override
    {
        events.push_back(ev);
        if (events.size() >= stop_after)
            return xmem::Error{"xmem: stopped by the visitor"};
        return std::nullopt;
    }
};

struct SnapshotOutcome {
    std::vector<xmem::trace::SnapshotEvent> events;
    xmem::trace::SnapshotSummary summary;
    std::string error;
};

inline SnapshotOutcome read_snapshot_text(const std::string &text, size_t stop_after = SIZE_MAX)
{
    SnapshotOutcome out;
    Collect collect;
    collect.stop_after = stop_after;
    std::FILE *f = file_with(text);
    auto r = xmem::trace::read_snapshot(f, "s.json", collect);
    std::fclose(f);
    out.events = collect.events;
    if (r.ok())
        out.summary = r.value();
    else
        out.error = r.error().message;
    return out;
}

} // namespace xmem::test
