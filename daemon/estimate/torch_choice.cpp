#include "torch_choice.h"

namespace xmem::estimate
{

Result<TorchChoice> choose_torch(const std::optional<std::string> &flag,
                                 std::string_view trace_torch)
{
    using R = Result<TorchChoice>;
    std::string_view job = flag ? std::string_view(*flag) : trace_torch;
    if (job.empty())
        job = k_fallback_torch;
    auto rules = sim::rules_for_job_torch(job);
    if (!rules.ok())
        return R::fail(rules.error().message + (flag ? " (--torch)" : ""));
    TorchChoice choice{rules.value().rules, rules.value().newer_than_known, ""};
    if (choice.newer_than_known)
        choice.note = "xmem: warning: the job's torch " + std::string(job) +
                      " is newer than the newest allocator xmem simulates; estimating with " +
                      choice.rules.str() + "'s rules (pass --torch to choose another)";
    return R::ok(std::move(choice));
}

} // namespace xmem::estimate
