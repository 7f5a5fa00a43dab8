// `xmem estimate --what-if KEY=VALUE`: the same job with one thing changed, printed beside
// the estimate (issue 30). Only changes xmem can apply faithfully are taken, and each is
// applied where it acts: `alloc-conf` is a setting of the allocator, so the same trace is
// replayed under it and nothing is profiled again. A change that would need the job's code
// to run differently (`amp`, `checkpoint`, `optimizer`) is refused with one line until the
// capture can apply it.
#pragma once

#include "common/result.h"
#include "analysis/estimate.h"

#include <string>

namespace xmem::estimate
{

// One line naming what is wrong, or success: checked before anything runs.
Result<void> check_what_if(const std::string &change);

// Estimates WORK once per change in CHANGES and appends the results to BASELINE.
Result<void> add_what_ifs(const std::vector<std::string> &changes, const analysis::Workload &work,
                          const analysis::Target &target, analysis::Estimate &baseline);

} // namespace xmem::estimate
