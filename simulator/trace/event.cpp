#include "trace/event.h"

namespace xmem::trace
{

namespace
{
constexpr const char *k_phase_names[] = {"setup",     "data",      "forward", "backward",
                                         "optimizer", "zero_grad", "other"};
}

const char *event_kind_name(EventKind kind)
{
    switch (kind) {
    case EventKind::alloc:
        return "alloc";
    case EventKind::free:
        return "free";
    case EventKind::record_stream:
        return "record_stream";
    case EventKind::empty_cache:
        return "empty_cache";
    case EventKind::set_fraction:
        return "set_fraction";
    case EventKind::iteration:
        return "iteration";
    case EventKind::phase:
        return "phase";
    }
    return "?";
}

const char *phase_name(Phase phase)
{
    return k_phase_names[static_cast<int>(phase)];
}

bool parse_phase(std::string_view name, Phase &out)
{
    for (int i = 0; i < static_cast<int>(sizeof k_phase_names / sizeof *k_phase_names); ++i) {
        if (name == k_phase_names[i]) {
            out = static_cast<Phase>(i);
            return true;
        }
    }
    return false;
}

} // namespace xmem::trace
