/*
 * outcome.h — the numbered outcomes of every request as a C++ enum, with their names and texts.
 * The list itself is contract/outcomes.h, shared with the C client.
 */
#ifndef XMEMD_OUTCOME_H
#define XMEMD_OUTCOME_H

#include "contract/outcomes.h"

#include <string_view>

namespace xmem::server
{

enum class Outcome : int {
#define X(num, name, text) name = num,
    XMEM_OUTCOMES(X)
#undef X
};

// Stable snake_case name stored in the ledger and shown in metrics.
std::string_view outcome_name(Outcome o);
// One line explaining the outcome.
std::string_view outcome_text(Outcome o);
// Every outcome in number order (for metrics and the outcomes doc check).
const Outcome *outcome_all(int *count);
// Profiles that ran but were stopped by a limit or failed.
bool outcome_is_profile_failure(Outcome o);
// The request got an estimate (estimated, or exceeds_gpu: it cannot fit): its answer carries
// a peak and a limit, is cached and signed, and its ledger row keeps its text.
bool outcome_is_answered(Outcome o);

} // namespace xmem::server
#endif
