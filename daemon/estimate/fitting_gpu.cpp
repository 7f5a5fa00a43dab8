#include "fitting_gpu.h"

#include <algorithm>
#include <vector>

namespace xmem::estimate
{

using namespace xmem::analysis;

Result<std::string> smallest_fitting_gpu(const Catalog &catalog, const std::string &trace_path,
                                         const Target &target, const Estimate &estimate)
{
    std::vector<GpuSpec> gpus = catalog.gpus();
    std::stable_sort(gpus.begin(), gpus.end(), [](const GpuSpec &a, const GpuSpec &b) {
        return a.total_bytes < b.total_bytes;
    });
    for (const GpuSpec &gpu : gpus) {
        // Allocated bytes sit inside reserved ones: a GPU smaller than them cannot fit, and
        // the estimate's replay ran without a capacity when the target ran out (estimate.h).
        if (gpu.total_bytes < estimate.replay.allocated_peak || gpu.name == target.gpu.name)
            continue;
        auto work = load_workload(trace_path);
        if (!work.ok())
            return Result<std::string>::fail(work.error());
        Target candidate = target;
        candidate.gpu = gpu;
        auto e = analyze(std::move(work.value()), candidate, nullptr);
        if (!e.ok())
            return Result<std::string>::fail(e.error());
        if (e.value().fits)
            return Result<std::string>::ok(gpu.name);
    }
    return Result<std::string>::ok("");
}

} // namespace xmem::estimate
