#include "analysis/estimate.h"

#include "analysis/limit.h"

#include <algorithm>
#include <numeric>

namespace xmem::analysis
{

namespace
{

Result<sim::AllocatorConfig> device_config(const Target &t, uint64_t outside)
{
    auto cfg = sim::AllocatorConfig::parse(t.alloc_conf, t.torch);
    if (!cfg.ok())
        return cfg;
    cfg.value().device_total_bytes = t.gpu.total_bytes;
    cfg.value().device_used_outside_bytes = t.gpu.context_bytes + outside;
    auto valid = cfg.value().validate();
    if (!valid.ok())
        return Result<sim::AllocatorConfig>::fail(valid.error());
    return cfg;
}

// The trace's `I` records number the steps (the format's older word, kept for readers).
uint32_t count_steps(const Workload &work)
{
    uint32_t n = 0;
    for (const TraceEvent &ev : work.events)
        if (ev.kind == EventKind::iteration)
            n = std::max(n, ev.iteration);
    return n;
}

// `M warning_<what> TEXT`: the capture saw something the user should know (how steps were
// found, a GPU kernel it could not match); each becomes one warning line of the estimate.
void note_capture_warnings(const Workload &work, Estimate &e)
{
    for (const auto &[key, value] : work.meta)
        if (key.rfind("warning_", 0) == 0)
            e.warnings.push_back("xmem: warning: " + value);
}

void summarize(Estimate &e)
{
    const ReplayResult &r = e.replay;
    uint64_t live = std::accumulate(r.live_at_peak.begin(), r.live_at_peak.end(), uint64_t{0});
    e.cache_bytes = r.reserved_peak > live ? r.reserved_peak - live : 0;
    e.context_bytes = e.target.gpu.context_bytes;
    e.outside_bytes = e.workspaces.outside_bytes + e.target.nccl_bytes;
    e.peak_bytes = e.context_bytes + r.reserved_peak + e.outside_bytes;
    e.fits = !r.oom && e.peak_bytes <= e.target.gpu.total_bytes;
    e.uses_gpu = r.allocated_peak > 0;
    if (!e.uses_gpu) {
        e.fits_reason = "the CUDA context alone fits: the job made no GPU tensors";
        e.warnings.push_back("xmem: warning: the job made no GPU tensors (0 B allocated); the "
                             "estimate is the CUDA context alone. Does the script need a flag "
                             "such as --cuda or --device cuda to use the GPU?");
    } else
        e.fits_reason = e.fits ? "the peak fits in the GPU's memory"
                               : (r.oom ? "the simulated allocator ran out of memory; the peak "
                                          "is what the job needs, simulated without a limit"
                                        : "the peak exceeds the GPU's memory");
    uint64_t bound = std::max(e.peak_bytes, e.workspace_bound_peak_bytes);
    e.limit_bytes = recommended_limit(bound, e.target.gpu.total_bytes, e.target.margin);
}

// The largest peak with cuDNN workspaces at each step above the point factor up to the
// bound; `work` has not had workspaces added.
Result<uint64_t> workspace_bound_peak(const Workload &work, const WorkspacePolicy &policy,
                                      const sim::AllocatorConfig &cfg, const Estimate &e)
{
    uint64_t worst = 0;
    int steps = static_cast<int>(
        (policy.conv_bound_factor - policy.conv_factor) / policy.conv_bound_step + 0.5);
    for (int i = 1; i <= steps; ++i) {
        WorkspacePolicy bound = policy;
        bound.conv_factor = policy.conv_factor + i * policy.conv_bound_step;
        Workload copy = work;
        add_workspaces(copy, bound);
        auto r = replay(copy, cfg, nullptr);
        if (!r.ok())
            return Result<uint64_t>::fail(r.error());
        worst = std::max(worst, r.value().reserved_peak);
    }
    return Result<uint64_t>::ok(e.target.gpu.context_bytes + worst + e.workspaces.outside_bytes);
}

// The replay at the target's capacity. When that runs out of memory, CFG loses its capacity
// and the workload is replayed again, so that the peak, breakdown, steps, timeline and
// workspace bound say what the job needs (a larger GPU's replay, less its catalog terms), and
// only `oom` and its message say where the target failed (docs/estimate.md, "A job that
// does not fit").
Result<ReplayResult> replay_needed(const Workload &work, sim::AllocatorConfig &cfg)
{
    auto capped = replay(work, cfg, nullptr);
    if (!capped.ok() || !capped.value().oom)
        return capped;
    cfg.device_total_bytes = 0; // the allocator's "unlimited"
    auto needed = replay(work, cfg, nullptr);
    if (!needed.ok())
        return needed;
    needed.value().oom = true;
    needed.value().oom_message = capped.value().oom_message;
    return needed;
}

// `M python` is "PATH VERSION" (docs/trace-format.md); the path may hold spaces, the
// version does not.
std::string interpreter_path(std::string_view meta)
{
    size_t space = meta.rfind(' ');
    return std::string(space == std::string_view::npos ? meta : meta.substr(0, space));
}

} // namespace

Result<Estimate> analyze(Workload work, const Target &target, timeline::TimelineRecorder *timeline,
                         Workload *analysed)
{
    Estimate e;
    e.target = target;
    e.torch_version = std::string(work.meta_value("torch"));
    e.python = interpreter_path(work.meta_value("python"));
    e.capture_mode = work.meta_value("capture") == "fast" ? "fast" : "exact";
    e.amp = work.meta_value("amp").empty() ? "off" : std::string(work.meta_value("amp"));
    e.steps = count_steps(work);
    note_capture_warnings(work, e);

    e.input_copies = add_input_copies(work);
    e.filter = drop_cpu_only(work);
    e.foreach = apply_target_foreach(work, target.torch);
    e.grads = apply_target_zero_grad(work, target.torch);
    e.gemm_copies = merge_batched_gemm_copies(work);
    WorkspacePolicy policy = workspace_policy(target.torch, target.gpu);
    bool bounded = !work.kernels.empty() && policy.conv_bound_step > 0 &&
                   policy.conv_bound_factor > policy.conv_factor;
    Workload before_workspaces = bounded ? work : Workload{};
    e.workspaces = add_workspaces(work, policy);
    if (analysed)
        *analysed = work;

    auto cfg = device_config(target, e.workspaces.outside_bytes);
    if (!cfg.ok())
        return Result<Estimate>::fail(cfg.error());
    auto r = replay_needed(work, cfg.value());
    if (!r.ok())
        return Result<Estimate>::fail(r.error());
    e.replay = std::move(r.value());
    if (timeline)
        if (auto t = replay_timeline(work, cfg.value(), e.replay, *timeline); !t.ok())
            return Result<Estimate>::fail(t.error());
    if (bounded && e.workspaces.cudnn) {
        auto b = workspace_bound_peak(before_workspaces, policy, cfg.value(), e);
        if (!b.ok())
            return Result<Estimate>::fail(b.error());
        e.workspace_bound_peak_bytes = b.value();
    }
    summarize(e);
    return Result<Estimate>::ok(std::move(e));
}

} // namespace xmem::analysis
