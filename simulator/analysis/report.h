// What xmem-estimate prints: a human summary or one JSON object (keys in docs/estimate.md).
#pragma once

#include "analysis/estimate.h"

#include <string>

namespace xmem::analysis
{

struct Timings {
    double profile_seconds = 0;
    double analyze_seconds = 0;
};

std::string render_json(const Estimate &e, const Timings &t);
std::string render_human(const Estimate &e, const Timings &t);

} // namespace xmem::analysis
