#include "what_if.h"

namespace xmem::estimate
{

namespace
{

// The changes xmem takes, and the one value each capture change has. A value of nullptr:
// any text, which the analysis checks (alloc-conf's settings).
struct Change {
    const char *key;
    const char *value;
    bool in_capture;
};

constexpr Change k_changes[] = {
    {"alloc-conf", nullptr, false},
    {"amp", "bf16", true},
    {"checkpoint", "all-blocks", true},
    {"optimizer", "fused", true},
};

constexpr const char *k_known =
    "known: alloc-conf=SETTINGS, amp=bf16, checkpoint=all-blocks, optimizer=fused";

const Change *find_change(const std::string &key)
{
    for (const Change &c : k_changes)
        if (key == c.key)
            return &c;
    return nullptr;
}

Result<void> refuse(const std::string &change, const std::string &why)
{
    return Result<void>::fail("xmem: --what-if " + change + ": " + why);
}

// The same trace replayed with the allocator settings CHANGE names.
Result<analysis::Estimate> replayed(const std::string &change, const analysis::Workload &work,
                                    const analysis::Target &target)
{
    analysis::Target changed = target;
    changed.alloc_conf = change.substr(change.find('=') + 1);
    return analysis::analyze(work, changed, nullptr);
}

// The job profiled again with CHANGE applied inside it, estimated for the same target.
Result<analysis::Estimate> profiled(const std::string &change, const analysis::Target &target,
                                    const ChangedProfile &profile)
{
    auto work = profile(change);
    if (!work.ok())
        return Result<analysis::Estimate>::fail(work.error());
    return analysis::analyze(std::move(work.value()), target, nullptr);
}

} // namespace

Result<void> check_what_if(const std::string &change)
{
    size_t eq = change.find('=');
    std::string key = change.substr(0, eq);
    if (eq == std::string::npos || eq + 1 == change.size())
        return refuse(change, "expected KEY=VALUE, e.g. alloc-conf=expandable_segments:True");
    const Change *c = find_change(key);
    if (!c)
        return refuse(change, std::string("unknown change (") + k_known + ")");
    std::string value = change.substr(eq + 1);
    if (key == "amp" && value == "fp16")
        return refuse(change, "fp16 needs a GradScaler in the training loop, which xmem cannot "
                              "add faithfully; try amp=bf16, or write autocast and a GradScaler "
                              "in the script and estimate it");
    if (c->value && value != c->value)
        return refuse(change, "unknown value (" + key + "=" + c->value + " only)");
    return Result<void>::success();
}

bool applied_in_capture(const std::string &change)
{
    const Change *c = find_change(change.substr(0, change.find('=')));
    return c && c->in_capture;
}

Result<void> add_what_ifs(const std::vector<std::string> &changes, const analysis::Workload &work,
                          const analysis::Target &target, analysis::Estimate &baseline,
                          const ChangedProfile &profile)
{
    for (const std::string &change : changes) {
        auto est = applied_in_capture(change) ? profiled(change, target, profile)
                                              : replayed(change, work, target);
        if (!est.ok()) {
            std::string why = est.error().message;
            if (why.rfind("xmem: --what-if ", 0) == 0) // names the change already
                return Result<void>::fail(why);
            if (why.rfind("xmem: ", 0) == 0)
                why.erase(0, 6);
            return refuse(change, why);
        }
        baseline.what_ifs.push_back({change, est.value().peak_bytes, est.value().limit_bytes,
                                     est.value().fits && !est.value().replay.oom});
    }
    return Result<void>::success();
}

} // namespace xmem::estimate
