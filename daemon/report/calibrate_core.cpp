// calibrate_core.cpp — the arithmetic of `xmem calibrate` (calibrate.h): pairs, the smallest
// margin that meets the target, the error distribution and the slack, and their text.
#include "calibrate.h"
#include "calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace xmem::report
{

const char *skip_reason(Skip s)
{
    switch (s) {
    case Skip::no_estimate:
        return "no estimate (refused, or failed)";
    case Skip::whole_gpu_oom:
        return "out of memory on a whole GPU (says nothing of a share)";
    case Skip::no_measured_peak:
        return "no measured peak (no NVML on the node)";
    case Skip::none:
        break;
    }
    return "";
}

bool in_window(const JobRecord &j, const Options &opt)
{
    return (!opt.since || j.ts >= *opt.since) && (!opt.until || j.ts < *opt.until);
}

Skip classify(const JobRecord &j, Pair &pair)
{
    if (j.limit_bytes == 0 || j.gpu.empty())
        return Skip::no_estimate;
    pair.limit_bytes = j.limit_bytes;
    if (j.cuda_oom || j.oom_requeued) {
        if (!j.packed)
            return Skip::whole_gpu_oom;
        pair.censored = true;
        return Skip::none;
    }
    if (!j.measured_bytes)
        return Skip::no_measured_peak;
    pair.measured_bytes = *j.measured_bytes;
    return Skip::none;
}

double pair_error(const Pair &p)
{
    return p.limit_bytes ? (double)p.measured_bytes / (double)p.limit_bytes - 1.0 : 0.0;
}

double percentile(const std::vector<double> &sorted, double pct)
{
    if (sorted.empty())
        return 0;
    std::size_t rank = (std::size_t)std::ceil(pct / 100.0 * (double)sorted.size());
    return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

std::size_t exceeding(const std::vector<Pair> &pairs, int margin_percent)
{
    std::size_t n = 0;
    for (const Pair &p : pairs)
        // Integers: measured > limit * (100 + m) / 100 without rounding (limits < 2^50).
        n += p.censored || (unsigned __int128)p.measured_bytes * 100 >
                               (unsigned __int128)p.limit_bytes * (100 + margin_percent);
    return n;
}

std::optional<int> smallest_margin(const std::vector<Pair> &pairs, double target, int max_percent)
{
    if (pairs.empty())
        return std::nullopt;
    for (int m = 0; m <= max_percent; m++)
        if ((double)exceeding(pairs, m) <= target * (double)pairs.size())
            return m;
    return std::nullopt;
}

double mean_slack_bytes(const std::vector<Pair> &pairs, int margin_percent)
{
    double sum = 0;
    std::size_t n = 0;
    for (const Pair &p : pairs) {
        if (p.censored)
            continue;
        double share = (double)p.limit_bytes * (100 + margin_percent) / 100.0;
        sum += std::max(0.0, share - (double)p.measured_bytes);
        n++;
    }
    return n ? sum / (double)n : 0;
}

namespace
{
void propose(Evidence &e, const CalibrateOptions &opt)
{
    if (e.pairs.size() < opt.min_pairs) {
        e.why_none = std::to_string(e.pairs.size()) + " pair(s), fewer than the " +
                     std::to_string(opt.min_pairs) + " needed (--min-pairs)";
        return;
    }
    e.proposed = smallest_margin(e.pairs, opt.target, xmem::server::k_calibrate_max_percent);
    if (!e.proposed)
        e.why_none = std::to_string(exceeding(e.pairs, xmem::server::k_calibrate_max_percent)) +
                     " of " + std::to_string(e.pairs.size()) + " pairs exceed even a " +
                     std::to_string(xmem::server::k_calibrate_max_percent) +
                     "% margin: keep these jobs on whole GPUs";
}
} // namespace

std::vector<Evidence>
calibrate(const std::vector<JobRecord> &jobs, const CalibrateOptions &opt,
          const std::function<int(const std::string &, const std::string &)> &current)
{
    std::map<std::pair<std::string, std::string>, Evidence> groups;
    for (const JobRecord &j : jobs) {
        if (!in_window(j, opt.sources))
            continue;
        Pair pair;
        Skip why = classify(j, pair);
        if (why == Skip::no_estimate)
            continue; // no GPU type to file it under; counted by the caller
        std::vector<std::string> accounts{""};
        // A name the calibration file cannot hold (a row older than job_end's check) counts
        // for the GPU's site-wide margin only, so one bad row cannot stop --apply.
        if (opt.by_account && xmem::server::calibration_account_ok(j.account))
            accounts.push_back(j.account);
        for (const std::string &account : accounts) {
            Evidence &e = groups[{j.gpu, account}];
            e.gpu = j.gpu;
            e.account = account;
            if (why == Skip::none)
                e.pairs.push_back(pair);
            else
                e.skipped[why]++;
        }
    }
    std::vector<Evidence> all;
    for (auto &[key, e] : groups) {
        e.current_percent = current(e.gpu, e.account);
        propose(e, opt);
        all.push_back(std::move(e));
    }
    return all;
}

namespace
{
std::string pct(double v)
{
    char b[32];
    snprintf(b, sizeof b, "%+.1f%%", v * 100);
    return b;
}

std::string gib(double bytes)
{
    char b[32];
    snprintf(b, sizeof b, "%.2f GiB", bytes / 1073741824.0);
    return b;
}

void render_one(std::ostringstream &o, const Evidence &e)
{
    std::size_t censored = 0;
    std::vector<double> errors;
    for (const Pair &p : e.pairs)
        if (p.censored)
            censored++;
        else
            errors.push_back(pair_error(p));
    std::sort(errors.begin(), errors.end());
    std::string indent = e.account.empty() ? "  " : "    ";
    o << (e.account.empty() ? e.gpu : "  account " + e.account) << ": " << e.pairs.size()
      << " pairs (" << errors.size() << " measured, " << censored
      << " out of memory on a share, counted as exceeding)\n";
    for (const auto &[why, n] : e.skipped)
        o << indent << "skipped " << n << ": " << skip_reason(why) << "\n";
    if (!errors.empty())
        o << indent << "error (measured/limit - 1): min " << pct(errors.front()) << "  p50 "
          << pct(percentile(errors, 50)) << "  p90 " << pct(percentile(errors, 90)) << "  p99 "
          << pct(percentile(errors, 99)) << "  max " << pct(errors.back()) << "\n";
    if (!e.proposed) {
        o << indent << "no proposal: " << e.why_none << " (current margin " << e.current_percent
          << "%)\n";
        return;
    }
    int m = *e.proposed;
    std::size_t over = exceeding(e.pairs, m);
    char rate[32];
    snprintf(rate, sizeof rate, "%.2f%%", 100.0 * (double)over / (double)e.pairs.size());
    o << indent << "proposed margin " << m << "% (current " << e.current_percent << "%): " << over
      << " of " << e.pairs.size() << " pairs (" << rate << ") exceed limit+" << m << "%\n";
    o << indent << "expected slack " << gib(mean_slack_bytes(e.pairs, m))
      << " per job at the proposed margin (" << gib(mean_slack_bytes(e.pairs, e.current_percent))
      << " at the current one)\n";
}
} // namespace

std::string render_evidence(const std::vector<Evidence> &all, const CalibrateOptions &opt)
{
    std::ostringstream o;
    char head[160];
    snprintf(head, sizeof head,
             "xmem calibrate: target OOM rate %.2f%%, at least %zu pairs per proposal\n",
             opt.target * 100, opt.min_pairs);
    o << head;
    for (const Evidence &e : all)
        render_one(o, e);
    return o.str();
}

} // namespace xmem::report
