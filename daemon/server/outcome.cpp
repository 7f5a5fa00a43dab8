// outcome.cpp — names and texts of the numbered outcomes, generated from one list so they
// never drift apart.
#include "outcome.h"

namespace xmem::server
{

std::string_view outcome_name(Outcome o)
{
    switch (o) {
#define X(num, name, text)                                                                         \
    case Outcome::name:                                                                            \
        return #name;
        XMEM_OUTCOMES(X)
#undef X
    }
    return "unknown";
}

std::string_view outcome_text(Outcome o)
{
    switch (o) {
#define X(num, name, text)                                                                         \
    case Outcome::name:                                                                            \
        return text;
        XMEM_OUTCOMES(X)
#undef X
    }
    return "unknown outcome";
}

const Outcome *outcome_all(int *count)
{
    static const Outcome all[] = {
#define X(num, name, text) Outcome::name,
        XMEM_OUTCOMES(X)
#undef X
    };
    *count = static_cast<int>(sizeof(all) / sizeof(all[0]));
    return all;
}

bool outcome_is_profile_failure(Outcome o)
{
    int n = static_cast<int>(o);
    return n >= XMEM_OUTCOME_profile_timeout && n <= XMEM_OUTCOME_spawn_failed;
}

bool outcome_is_answered(Outcome o)
{
    return o == Outcome::estimated || o == Outcome::exceeds_gpu;
}

} // namespace xmem::server
