// The recommended hard limit and the coverage it is stated with.
//
// limit = peak x (1 + k_limit_margin), rounded up to a MiB, where for a job with
// convolutions `peak` is the largest over the cuDNN workspace factors up to the bound
// (estimate.h). The margin comes from the 95th percentile of (measured - estimated) /
// estimated over the calibration runs of `make bench-accuracy` (bench/accuracy.sh prints it
// as "margin for 95 % coverage"), with a floor while the CNN calibration is thin:
// docs/estimate.md, "The limit and its coverage".
#pragma once

#include <cstdint>

namespace xmem::analysis
{

// bench-accuracy (2026-12-02) measured a calib 95th percentile of 0.2 %, dominated by MLPs
// that xmem reproduces to the MiB; its CNN records ran -4.9 %..+4.0 %, so the margin keeps
// a 5 % floor (docs/estimate.md, "The limit").
constexpr double k_limit_margin = 0.05;
constexpr const char *k_limit_coverage =
    "95% of GPUMemNet A100-40GB calibration runs at or below the limit (MLPs; CNNs less sure)";

// peak x (1 + margin) rounded up to a MiB; capped at the GPU's memory when the peak fits.
uint64_t recommended_limit(uint64_t peak_bytes, uint64_t gpu_total_bytes, double margin);

} // namespace xmem::analysis
