// whatif_render.cpp — `xmem report --what-if` as text, CSV (one row per job) and JSON: the
// totals of what happened, of the policy in force replayed, and of the changed policy, side
// by side, then each job. MiB are 2^20 bytes.
#include "whatif.h"

#include <cstdio>
#include <functional>

namespace xmem::report
{

namespace
{
std::string fixed(double v, int digits)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string mib(uint64_t bytes)
{
    return std::to_string((bytes + (1u << 20) - 1) >> 20);
}

double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

std::string changes_text(const WhatIf &w)
{
    std::string s;
    for (const Change &c : w.changes)
        s += (s.empty() ? "" : ",") + c.key + "=" + c.value;
    return s;
}

// "shard:3", "mps:30" or "whole", and " OOM" when the job would run out of memory.
std::string cell(const Replayed &r)
{
    std::string s = r.share.packed ? r.share.kind + ":" + std::to_string(r.share.count) : "whole";
    return r.oom ? s + " OOM" : s;
}

std::string measured(const WhatIfJob &j)
{
    return j.censored ? std::string("oom") : mib(j.measured_bytes);
}

// One line of the totals: the name, then the figure of each column.
std::string side_row(const std::string &name, const WhatIf &w,
                     const std::function<std::string(const Side &)> &f)
{
    char line[160];
    snprintf(line, sizeof line, "%-18s  %16s  %16s  %16s\n", name.c_str(), f(w.actual).c_str(),
             f(w.current).c_str(), f(w.what_if).c_str());
    return line;
}

std::string side_json(const Side &s, std::size_t considered)
{
    return "{\"packed\":" + std::to_string(s.packed) +
           ",\"packed_pct\":" + fixed(pct(s.packed, considered), 2) +
           ",\"oom\":" + std::to_string(s.oom) + ",\"oom_pct\":" + fixed(pct(s.oom, s.packed), 2) +
           ",\"gpu_hours_freed\":" + fixed(s.gpu_hours_freed, 6) + "}";
}

std::string replayed_json(const Replayed &r)
{
    return "{\"share\":" + json_string(cell(Replayed{r.share, false})) +
           ",\"share_mib\":" + std::to_string(r.share.share_mb) +
           ",\"margin_percent\":" + std::to_string(r.share.margin_percent) +
           ",\"packed\":" + (r.share.packed ? "true" : "false") +
           ",\"oom\":" + (r.oom ? "true" : "false") + "}";
}
} // namespace

std::string render_what_if_table(const WhatIf &w)
{
    std::size_t n = w.jobs.size();
    std::string out = "\nwhat if " + changes_text(w) + ": " + std::to_string(n) +
                      " jobs with an estimate and a measured peak (or an OOM on a share), "
                      "replayed with xmem_lib.lua's share()\n";
    char head[160];
    snprintf(head, sizeof head, "%-18s  %16s  %16s  %16s\n", "", "actual", "current policy",
             "what-if");
    out += head;
    out += side_row("packed", w, [&](const Side &s) {
        return std::to_string(s.packed) + " (" + fixed(pct(s.packed, n), 1) + "%)";
    });
    out += side_row("OOM among packed", w, [](const Side &s) {
        return std::to_string(s.oom) + " (" + fixed(pct(s.oom, s.packed), 1) + "%)";
    });
    out +=
        side_row("GPU-hours freed", w, [](const Side &s) { return fixed(s.gpu_hours_freed, 3); });
    for (const auto &[why, count] : w.skipped)
        out += "skipped " + std::to_string(count) + ": " + skip_reason(why) + "\n";
    if (w.defective)
        out += "skipped " + std::to_string(w.defective) + ": a row xmem calibrate refuses\n";
    char line[200];
    snprintf(line, sizeof line, "%-10s  %-12s  %-10s  %8s  %8s  %8s  %-14s  %-14s  %-14s\n", "job",
             "user", "partition", "estimate", "limit", "measured", "actual", "current", "what-if");
    out += "\n" + std::string(line);
    for (const WhatIfJob &j : w.jobs) {
        std::string actual =
            std::string(j.actual_packed ? "packed" : "whole") + (j.actual_oom ? " OOM" : "");
        snprintf(line, sizeof line, "%-10llu  %-12s  %-10s  %8s  %8s  %8s  %-14s  %-14s  %-14s\n",
                 (unsigned long long)j.job_id, j.user.c_str(),
                 j.partition.empty() ? "-" : j.partition.c_str(), mib(j.estimate_bytes).c_str(),
                 mib(j.limit_bytes).c_str(), measured(j).c_str(), actual.c_str(),
                 cell(j.current).c_str(), cell(j.what_if).c_str());
        out += line;
    }
    return out + "(MiB; OOM: the peak is above the limit the job would be held to on a share)\n";
}

std::string render_what_if_csv(const WhatIf &w)
{
    std::string out = "job_id,user,partition,gpu,estimate_mib,limit_mib,measured_mib,hours,"
                      "actual_packed,actual_oom,current_share,current_share_mib,current_oom,"
                      "what_if_share,what_if_share_mib,what_if_oom\n";
    for (const WhatIfJob &j : w.jobs)
        out += std::to_string(j.job_id) + "," + csv_field(j.user) + "," + csv_field(j.partition) +
               "," + csv_field(j.gpu) + "," + mib(j.estimate_bytes) + "," + mib(j.limit_bytes) +
               "," + measured(j) + "," + fixed(j.hours, 6) + "," + (j.actual_packed ? "1" : "0") +
               "," + (j.actual_oom ? "1" : "0") + "," + cell(Replayed{j.current.share, false}) +
               "," + std::to_string(j.current.share.share_mb) + "," + (j.current.oom ? "1" : "0") +
               "," + cell(Replayed{j.what_if.share, false}) + "," +
               std::to_string(j.what_if.share.share_mb) + "," + (j.what_if.oom ? "1" : "0") + "\n";
    return out;
}

std::string render_what_if_json(const WhatIf &w)
{
    std::string out = "{\"changes\":{";
    for (std::size_t i = 0; i < w.changes.size(); i++)
        out +=
            (i ? "," : "") + json_string(w.changes[i].key) + ":" + json_string(w.changes[i].value);
    out += "},\"considered\":" + std::to_string(w.jobs.size()) + ",\"skipped\":{";
    bool first = true;
    for (const auto &[why, count] : w.skipped) {
        out += (first ? "" : ",") + json_string(skip_reason(why)) + ":" + std::to_string(count);
        first = false;
    }
    out += "},\"defective\":" + std::to_string(w.defective) +
           ",\"actual\":" + side_json(w.actual, w.jobs.size()) +
           ",\"current\":" + side_json(w.current, w.jobs.size()) +
           ",\"what_if\":" + side_json(w.what_if, w.jobs.size()) + ",\"jobs\":[";
    for (std::size_t i = 0; i < w.jobs.size(); i++) {
        const WhatIfJob &j = w.jobs[i];
        out += std::string(i ? "," : "") + "{\"job_id\":" + std::to_string(j.job_id) +
               ",\"user\":" + json_string(j.user) + ",\"partition\":" + json_string(j.partition) +
               ",\"gpu\":" + json_string(j.gpu) + ",\"estimate_mib\":" + mib(j.estimate_bytes) +
               ",\"limit_mib\":" + mib(j.limit_bytes) +
               ",\"measured_mib\":" + (j.censored ? "null" : mib(j.measured_bytes)) +
               ",\"oom_on_share\":" + (j.censored ? "true" : "false") +
               ",\"hours\":" + fixed(j.hours, 6) +
               ",\"actual\":{\"packed\":" + (j.actual_packed ? "true" : "false") +
               ",\"oom\":" + (j.actual_oom ? "true" : "false") +
               "},\"current\":" + replayed_json(j.current) +
               ",\"what_if\":" + replayed_json(j.what_if) + "}";
    }
    return out + "]}";
}

} // namespace xmem::report
