// The analysis, end to end: a CPU trace in, what the job will use on the target GPU out.
//
//   add_input_copies → drop_cpu_only → apply_target_foreach → apply_target_zero_grad
//   → merge_batched_gemm_copies → add_workspaces → replay
//
// A job with convolutions is replayed more than once: with cuDNN workspaces at the factor
// that fits measured peaks best (the point estimate), then at each step above it up to the
// factor that bounds them; the limit covers the largest of these peaks. The workspace an
// algorithm takes is the one thing a CPU run cannot tell, and the simulated peak is not
// monotonic in it (an extra block changes which segments are split and reused), so the
// whole range is replayed, not only its end (docs/estimate.md, "cuDNN workspaces").
//
// Each pass is its own module with its rule written at the top; this one only orders them
// and turns the replay into the numbers the CLI prints.
#pragma once

#include "common/result.h"
#include "allocator/version.h"
#include "analysis/catalog.h"
#include "analysis/categorize.h"
#include "analysis/cpu_filter.h"
#include "analysis/gemm_copies.h"
#include "analysis/grad_lifetime.h"
#include "analysis/optimizer_foreach.h"
#include "analysis/replay.h"
#include "analysis/workload.h"
#include "analysis/workspaces.h"

#include <string>
#include <vector>

namespace xmem::analysis
{

struct Target {
    GpuSpec gpu;
    sim::TorchVersion torch;
    std::string alloc_conf; // PYTORCH_CUDA_ALLOC_CONF of the job ("" = defaults)
    double margin = 0;      // limit margin (k_limit_margin unless overridden)
    // The job's torch is newer than every release simulated: `torch` is the newest's rules.
    bool torch_newer_than_known = false;
    // NCCL's own buffers in one rank of a multi-GPU job (the catalog's `nccl` term); 0 for
    // a job of one process. Outside the allocator, so in outside_bytes.
    uint64_t nccl_bytes = 0;
};

// The same trace estimated with one thing changed (`xmem estimate --what-if`).
struct WhatIf {
    std::string change; // as the user wrote it: "alloc-conf=expandable_segments:True"
    uint64_t peak_bytes = 0;
    uint64_t limit_bytes = 0;
    bool fits = false;
};

struct Estimate {
    Target target;
    std::string torch_version; // the job's torch (`M torch` of the trace), e.g. "2.14.1"
    std::string python;        // the interpreter that ran the job (`M python`), a path
    std::string capture_mode;  // "fast" or "exact": the capture that wrote the trace
    std::string amp;           // off, fp16, bf16
    uint32_t steps = 0;        // optimizer steps in the trace
    uint64_t input_copies = 0;
    FilterStats filter;
    ForeachStats foreach;
    GradStats grads;
    GemmCopyStats gemm_copies;
    WorkspaceStats workspaces;
    ReplayResult replay;
    uint64_t context_bytes = 0;
    uint64_t outside_bytes = 0; // library memory outside the allocator
    // context + reserved peak + outside: what nvidia-smi shows; when the target ran out of
    // memory, what the job needs, replayed without a capacity (`replay.oom` says so).
    uint64_t peak_bytes = 0;
    // The largest peak with cuDNN workspaces between the point and the bound factor
    // (workspaces.h); the limit covers it. 0 when no convolution has a K record.
    uint64_t workspace_bound_peak_bytes = 0;
    uint64_t limit_bytes = 0;
    uint64_t cache_bytes = 0; // reserved peak - live requested bytes at the peak
    bool fits = false;
    // When the job does not fit: the smallest GPU of the catalog on which it does (the caller
    // searches it, since the analysis knows one target); "" when it fits or none fits.
    std::string smallest_fitting_gpu;
    // False when the job made no GPU tensors (allocated peak 0): a forgotten --cuda flag.
    // `fits` then covers the CUDA context alone, which fits_reason and warnings say.
    bool uses_gpu = true;
    std::string fits_reason;
    std::vector<std::string> warnings; // one line each, for the user (stderr and JSON)
    std::vector<WhatIf> what_ifs;      // printed beside this, the baseline
};

// `analysed`, when given, receives the workload as replayed (every pass applied).
Result<Estimate> analyze(Workload work, const Target &target, timeline::TimelineRecorder *timeline,
                         Workload *analysed = nullptr);

} // namespace xmem::analysis
