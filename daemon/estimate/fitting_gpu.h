// The smallest GPU of the catalog that holds a job its target does not: what an estimate
// that does not fit names instead of a limit (docs/estimate.md, "A job that does not fit").
#pragma once

#include "analysis/catalog.h"
#include "analysis/estimate.h"
#include "common/result.h"

#include <string>

namespace xmem::estimate
{

// Analyses the trace at TRACE_PATH again for each GPU of CATALOG, smallest memory first, with
// TARGET's torch, allocator settings and margin, and returns the name of the first on which
// the estimate fits; "" when none does. ESTIMATE (TARGET's, not fitting) rules out at once
// every GPU with less memory than its allocated peak: those cannot fit.
Result<std::string> smallest_fitting_gpu(const analysis::Catalog &catalog,
                                         const std::string &trace_path,
                                         const analysis::Target &target,
                                         const analysis::Estimate &estimate);

} // namespace xmem::estimate
