#include "what_if.h"

namespace xmem::estimate
{

namespace
{

// Changes the issue names that change what the job's code does: a capture would have to
// run it so, and none does yet.
constexpr const char *k_not_yet[] = {"amp", "checkpoint", "optimizer"};

} // namespace

Result<void> check_what_if(const std::string &change)
{
    size_t eq = change.find('=');
    std::string key = change.substr(0, eq);
    if (eq == std::string::npos || eq + 1 == change.size())
        return Result<void>::fail("xmem: --what-if " + change +
                                  ": expected KEY=VALUE, e.g. alloc-conf=expandable_segments:True");
    if (key == "alloc-conf")
        return Result<void>::success();
    for (const char *k : k_not_yet)
        if (key == k)
            return Result<void>::fail("xmem: --what-if " + change + ": " + key +
                                      " changes what the job runs, which no capture applies yet; "
                                      "make the change in the script and estimate it");
    return Result<void>::fail("xmem: --what-if " + change +
                              ": unknown change (known: alloc-conf=SETTINGS)");
}

Result<void> add_what_ifs(const std::vector<std::string> &changes, const analysis::Workload &work,
                          const analysis::Target &target, analysis::Estimate &baseline)
{
    for (const std::string &change : changes) {
        analysis::Target changed = target;
        changed.alloc_conf = change.substr(change.find('=') + 1);
        auto est = analysis::analyze(work, changed, nullptr);
        if (!est.ok()) {
            std::string why = est.error().message;
            if (why.rfind("xmem: ", 0) == 0)
                why.erase(0, 6);
            return Result<void>::fail("xmem: --what-if " + change + ": " + why);
        }
        baseline.what_ifs.push_back({change, est.value().peak_bytes, est.value().limit_bytes,
                                     est.value().fits && !est.value().replay.oom});
    }
    return Result<void>::success();
}

} // namespace xmem::estimate
