#include "trace/event.h"

namespace xmem::trace
{

namespace
{
constexpr const char *k_phase_names[] = {"setup",     "data",      "forward", "backward",
                                         "optimizer", "zero_grad", "other"};
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
