// PyTorch's names for the memory-snapshot trace actions (allocator.md 13.3).
#include "allocator/trace.h"

namespace xmem::sim
{

const char *to_string(TraceAction action)
{
    switch (action) {
    case TraceAction::alloc:
        return "alloc";
    case TraceAction::free_requested:
        return "free_requested";
    case TraceAction::free_completed:
        return "free_completed";
    case TraceAction::segment_alloc:
        return "segment_alloc";
    case TraceAction::segment_free:
        return "segment_free";
    case TraceAction::segment_map:
        return "segment_map";
    case TraceAction::segment_unmap:
        return "segment_unmap";
    case TraceAction::oom:
        return "oom";
    }
    return "unknown";
}

} // namespace xmem::sim
