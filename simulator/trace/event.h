// One record of an xmem compact trace (docs/trace-format.md), as the readers hand it out.
// Why a flat struct with every field: consumers switch on `kind` in a hot loop at
// >10 M events/s, so the event is a plain value the reader overwrites in place.
#pragma once

#include <cstdint>
#include <string_view>

namespace xmem::trace
{

enum class EventKind : uint8_t {
    alloc,         // `A`: id, bytes, dev, stream, ctx
    free,          // `F`: id; bytes, dev, stream are those of the freed storage
    record_stream, // `R`: id, stream (the other stream); bytes, dev of the storage
    empty_cache,   // `E`
    set_fraction,  // `X`: fraction
    iteration,     // `I`: iteration (the new iteration number)
    phase,         // `P`: phase (the new phase)
};

enum class Device : uint8_t { gpu, host };

enum class Phase : uint8_t { setup, data, forward, backward, optimizer, zero_grad, other };

struct TraceEvent {
    EventKind kind = EventKind::alloc;
    Device dev = Device::gpu;
    Phase phase = Phase::setup; // phase the event belongs to (for `phase`, the new one)
    uint32_t iteration = 0;     // iteration the event belongs to (for `iteration`, the new one)
    uint64_t id = 0;            // storage id
    uint64_t bytes = 0;         // exact requested storage bytes
    uint64_t stream = 0;        // 0 = default stream
    uint64_t ctx = 0;           // interned string id, 0 = none
    double fraction = 0.0;      // set_fraction only
    uint64_t line = 0;          // 1-based line in the trace file
};

const char *phase_name(Phase phase);
// Returns false for a name that is not one of the seven phases of the format.
bool parse_phase(std::string_view name, Phase &out);

} // namespace xmem::trace
