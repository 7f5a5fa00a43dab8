// Trace format detection from the first bytes, so `xmem sim TRACE` needs no format flag.
#pragma once

#include <cstdio>

namespace xmem::trace
{

enum class TraceFormat {
    compact,         // starts with '#' (#xmem-trace 1)
    snapshot_json,   // starts with '{' or '[' after optional whitespace
    snapshot_pickle, // starts with the pickle protocol byte 0x80 (torch's _dump_snapshot)
    empty,
    unknown,
};

// Consumes leading whitespace only (irrelevant to JSON; fatal to a compact trace, which is
// reported as unknown) and pushes the first significant byte back, so it works on pipes.
TraceFormat detect_format(std::FILE *file);

} // namespace xmem::trace
