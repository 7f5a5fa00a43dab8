// whatif_core.cpp — the arithmetic of `xmem report --what-if` (whatif.h): the changes, read
// by xmemd's own policy parser, and each considered job replayed under the policy in force
// and under the changed one.
#include "whatif.h"

#include "config.h"

#include <cmath>

namespace xmem::report
{

const std::vector<std::string> &what_if_keys()
{
    static const std::vector<std::string> keys = {"mode", "margin_percent",
                                                  "whole_gpu_above_percent", "require_enforcement"};
    return keys;
}

namespace
{
using Changes = xmem::Result<std::vector<Change>>;

std::string known_keys()
{
    std::string list;
    const auto &keys = what_if_keys();
    for (std::size_t i = 0; i < keys.size(); i++)
        list += (i == 0 ? "" : i + 1 == keys.size() ? " or " : ", ") + keys[i];
    return list;
}

bool ends_with(const std::string &s, const std::string &tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// One "KEY=VALUE", checked; `seen` refuses a key given twice.
xmem::Result<Change> parse_one(const std::string &item, std::vector<std::string> &seen)
{
    using R = xmem::Result<Change>;
    std::string head = "xmem: report: --what-if " + item + ": ";
    std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
        return R::fail(head + "expected KEY=VALUE, e.g. mode=mps,margin_percent=20");
    Change c{item.substr(0, eq), item.substr(eq + 1)};
    bool known = false;
    for (const std::string &k : what_if_keys())
        known = known || k == c.key;
    if (!known)
        return R::fail(head + "unknown change '" + c.key + "' (use " + known_keys() +
                       ", keys of xmem.yaml's policy:)");
    for (const std::string &k : seen)
        if (k == c.key)
            return R::fail(head + "'" + c.key + "' given twice; keep one");
    seen.push_back(c.key);
    // "20%" reads as the percent the key's name already says.
    if (ends_with(c.key, "_percent") && ends_with(c.value, "%"))
        c.value.pop_back();
    xmem::server::Policy scratch;
    auto set = xmem::server::config_policy_set(scratch, c.key, c.value);
    if (!set.ok())
        return R::fail(head + set.error().message);
    return R::ok(std::move(c));
}
} // namespace

xmem::Result<std::vector<Change>> parse_changes(const std::string &text)
{
    std::vector<Change> changes;
    std::vector<std::string> seen;
    std::size_t from = 0;
    for (;;) {
        std::size_t comma = text.find(',', from);
        auto one = parse_one(
            text.substr(from, comma == std::string::npos ? std::string::npos : comma - from), seen);
        if (!one.ok())
            return Changes::fail(one.error());
        changes.push_back(std::move(one).value());
        if (comma == std::string::npos)
            return Changes::ok(std::move(changes));
        from = comma + 1;
    }
}

xmem::server::Policy apply_changes(xmem::server::Policy p, const std::vector<Change> &changes)
{
    for (const Change &c : changes)
        (void)xmem::server::config_policy_set(p, c.key, c.value); // checked by parse_changes
    return p;
}

double share_part(const Share &s)
{
    if (!s.packed || s.per_gpu <= 0)
        return 1.0;
    return (double)s.count / (double)s.per_gpu;
}

bool would_oom(const Pair &pair, bool packed)
{
    return packed && (pair.censored || pair.measured_bytes > pair.limit_bytes);
}

double actual_part(const JobRecord &j)
{
    if (!j.packed)
        return 1.0;
    if (j.gpu_fraction)
        return *j.gpu_fraction;
    return j.capacity_bytes ? (double)j.limit_bytes / (double)j.capacity_bytes : 1.0;
}

uint64_t held_to(const WhatIfJob &j, bool packed)
{
    return packed ? j.limit_bytes : j.capacity_bytes;
}

void Side::add(bool is_packed, bool is_oom, double part, double hours)
{
    if (!is_packed)
        return;
    packed++;
    if (is_oom) {
        oom++; // requeued whole: what it held of its share freed nothing
        return;
    }
    gpu_hours_freed += (1.0 - part) * hours;
}

namespace
{
// `shares_known`: the nodes report the share a job ran on (jobs.gpu_fraction, ledger schema
// 8), so a job without one kept its whole GPU even where its limit was below the GPU (the
// report's `packed` cannot see the whole-GPU threshold).
WhatIfJob row_of(const JobRecord &j, const Pair &pair, bool shares_known)
{
    WhatIfJob r;
    r.job_id = j.job_id;
    r.user = j.user;
    r.partition = j.partition;
    r.gpu = j.gpu;
    r.estimate_bytes = j.estimate_bytes;
    r.limit_bytes = j.limit_bytes;
    r.capacity_bytes = j.capacity_bytes;
    r.measured_bytes = pair.measured_bytes;
    r.censored = pair.censored;
    r.hours = (double)j.elapsed_seconds / 3600.0;
    r.actual_packed = j.packed && (j.gpu_fraction || !shares_known);
    r.actual_oom = r.actual_packed && (j.cuda_oom || j.oom_requeued);
    r.actual_part = actual_part(j);
    return r;
}

Replayed replay(const Share &s, const Pair &pair, bool eligible)
{
    Replayed r;
    r.share = s;
    r.share.packed = eligible && s.packed; // a --xmem=check job keeps its GPU under any policy
    r.oom = would_oom(pair, r.share.packed);
    return r;
}
} // namespace

xmem::Result<WhatIf> build_what_if(const std::vector<JobRecord> &jobs, const Options &opt,
                                   const xmem::server::Policy &current,
                                   const std::vector<Change> &changes, const ShareFn &shares)
{
    WhatIf w;
    w.changes = changes;
    std::vector<ShareQuery> queries;
    std::vector<Pair> pairs;
    std::vector<bool> eligible;
    bool shares_known = false;
    for (const JobRecord &j : jobs)
        shares_known = shares_known || (in_window(j, opt) && j.gpu_fraction);
    for (const JobRecord &j : jobs) {
        if (!in_window(j, opt))
            continue;
        if (!j.defect.empty()) {
            w.defective++;
            continue;
        }
        Pair pair;
        if (Skip why = classify(j, pair); why != Skip::none) {
            w.skipped[why]++;
            continue;
        }
        w.jobs.push_back(row_of(j, pair, shares_known));
        pairs.push_back(pair);
        eligible.push_back(j.eligible);
        // Ledger limits are whole MiB already (the estimate rounds up), as share() takes them.
        queries.push_back({(j.limit_bytes + (1u << 20) - 1) >> 20, j.partition, j.account});
    }
    auto now = shares(current, queries);
    if (!now.ok())
        return xmem::Result<WhatIf>::fail(now.error());
    auto next = shares(apply_changes(current, changes), queries);
    if (!next.ok())
        return xmem::Result<WhatIf>::fail(next.error());
    for (std::size_t i = 0; i < w.jobs.size(); i++) {
        WhatIfJob &r = w.jobs[i];
        r.current = replay(now.value()[i], pairs[i], eligible[i]);
        r.what_if = replay(next.value()[i], pairs[i], eligible[i]);
        w.actual.add(r.actual_packed, r.actual_oom, r.actual_part, r.hours);
        w.current.add(r.current.share.packed, r.current.oom, share_part(r.current.share), r.hours);
        w.what_if.add(r.what_if.share.packed, r.what_if.oom, share_part(r.what_if.share), r.hours);
    }
    return xmem::Result<WhatIf>::ok(std::move(w));
}

} // namespace xmem::report
