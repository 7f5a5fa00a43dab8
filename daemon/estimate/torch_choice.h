// Which PyTorch release's allocator rules an estimate applies (docs/estimate.md, "Which
// PyTorch"): --torch when given, else the job's own torch, which the trace records.
#pragma once

#include "common/result.h"
#include "allocator/version.h"

#include <optional>
#include <string>
#include <string_view>

namespace xmem::estimate
{

// A trace written before captures recorded their torch (none do today) gets these rules.
inline constexpr const char *k_fallback_torch = "2.6";

struct TorchChoice {
    sim::TorchVersion rules;
    bool newer_than_known = false; // the job's torch is newer than every release simulated
    std::string note;              // one line for the user when newer_than_known, else ""
};

// FLAG is --torch (already checked to be a known release); TRACE_TORCH the trace's `M torch`.
Result<TorchChoice> choose_torch(const std::optional<std::string> &flag,
                                 std::string_view trace_torch);

} // namespace xmem::estimate
