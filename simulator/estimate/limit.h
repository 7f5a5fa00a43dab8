// The recommended hard limit and the coverage it is stated with.
//
// limit = peak x (1 + k_limit_margin), rounded up to a MiB. The margin is the 95th
// percentile of (measured - estimated) / estimated over the calibration runs of
// `make bench-accuracy` (bench/accuracy.sh prints it as "margin for 95 % coverage"):
// docs/estimate.md, "The limit", tells how it was derived and on which records.
#pragma once

#include <cstdint>

namespace xmem::estimate {

constexpr double k_limit_margin = 0.05;
constexpr const char *k_limit_coverage =
    "95% of calibration runs (GPUMemNet A100-40GB MLP set) measured at or below the limit";

// peak x (1 + margin) rounded up to a MiB; capped at the GPU's memory when the peak fits.
uint64_t recommended_limit(uint64_t peak_bytes, uint64_t gpu_total_bytes, double margin);

} // namespace xmem::estimate
