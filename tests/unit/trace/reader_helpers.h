// Reads a whole compact trace held in a string: the events, or the first error.
#pragma once

#include "test_helpers.h"

#include "trace/compact_reader.h"

#include <vector>

namespace xmem::test
{

struct ReadOutcome {
    std::vector<xmem::trace::TraceEvent> events;
    std::string error; // empty: the trace read cleanly to its Z line
};

inline ReadOutcome read_compact(const std::string &text, const std::string &name = "t.xtrace")
{
    ReadOutcome out;
    std::FILE *f = file_with(text);
    auto reader = xmem::trace::CompactTraceReader::open(f, name);
    if (!reader.ok()) {
        out.error = reader.error().message;
        std::fclose(f);
        return out;
    }
    xmem::trace::TraceEvent ev;
    for (;;) {
        auto more = reader.value().next(ev);
        if (!more.ok()) {
            out.error = more.error().message;
            break;
        }
        if (!more.value())
            break;
        out.events.push_back(ev);
    }
    std::fclose(f);
    return out;
}

// The example of docs/trace-format.md, verbatim.
inline const char *format_doc_example()
{
    return "#xmem-trace 1\n"
           "M torch 1.13.1\n"
           "M capture exact\n"
           "P setup\n"
           "S 1 fc|aten::empty\n"
           "A 1 4000 g 0 1\n"
           "A 2 40 g 0 1\n"
           "I 1\n"
           "P data\n"
           "A 3 3072 h 0 0\n"
           "A 4 3072 g 0 0\n"
           "F 3\n"
           "P forward\n"
           "S 2 fc|aten::addmm\n"
           "A 5 320 g 0 2\n"
           "F 4\n"
           "F 5\n"
           "Z 5 3 4040\n";
}

} // namespace xmem::test
