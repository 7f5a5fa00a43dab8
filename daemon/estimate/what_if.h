// `xmem estimate --what-if KEY=VALUE`: the same job with one thing changed, printed beside
// the estimate (issue 30). Only changes xmem can apply faithfully are taken, and each is
// applied where it acts:
//   * `alloc-conf=SETTINGS` is a setting of the allocator: the same trace is replayed under
//     it, and nothing is profiled again;
//   * `amp=bf16`, `checkpoint=all-blocks`, `optimizer=fused` change what the job's code runs:
//     the job is profiled again, by the capture that made the estimate's trace, with the
//     change applied inside it (`xmem-profile --what-if`, xmem_capture/what_if.py). The
//     capture refuses, in one line and exit status 8 (REFUSED), a change it cannot apply
//     faithfully to this job (docs/estimate.md, "What if").
#pragma once

#include "common/result.h"
#include "analysis/estimate.h"

#include <functional>
#include <string>
#include <vector>

namespace xmem::estimate
{

// One line naming what is wrong, or success: checked before anything runs.
Result<void> check_what_if(const std::string &change);

// Whether a checked CHANGE is applied by profiling the job again (else by a replay).
bool applied_in_capture(const std::string &change);

// The job profiled again with CHANGE applied inside it, or the line saying why not.
using ChangedProfile = std::function<Result<analysis::Workload>(const std::string &change)>;

// Estimates WORK once per change in CHANGES (profiling the job again through PROFILE for a
// change the capture applies) and appends the results to BASELINE.
Result<void> add_what_ifs(const std::vector<std::string> &changes, const analysis::Workload &work,
                          const analysis::Target &target, analysis::Estimate &baseline,
                          const ChangedProfile &profile);

} // namespace xmem::estimate
