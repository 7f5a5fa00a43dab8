// report_render.cpp — table, CSV and JSON renderings of a Report. GiB are 2^30 bytes.
#include "report.h"
#include "calibrate.h"
#include "whatif.h"

#include <cstdio>

namespace xmem::report
{

namespace
{
constexpr double k_gib = 1073741824.0;

std::string fixed(double v, int digits)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%.*f", digits, v);
    return buf;
}

// One row's figures in a fixed column order shared by table and CSV.
std::vector<std::string> figures(const Totals &t)
{
    std::vector<std::string> f = {std::to_string(t.jobs),
                                  std::to_string(t.packed),
                                  std::to_string(t.failed),
                                  std::to_string(t.oom_after_packing),
                                  fixed(t.requested_bytes / k_gib, 1),
                                  fixed(t.limit_bytes / k_gib, 1),
                                  fixed(t.estimated_bytes / k_gib, 1),
                                  t.measured_jobs ? fixed(t.measured_bytes / k_gib, 1) : "",
                                  fixed(t.gpu_hours_freed, 3),
                                  t.measured_jobs ? fixed(100.0 * t.mean_abs_error(), 1) : "",
                                  std::to_string(t.oom_requeued)};
    for (const std::string &level : enforcement_keys()) {
        auto it = t.by_enforcement.find(level);
        f.push_back(std::to_string(it == t.by_enforcement.end() ? 0 : it->second));
    }
    f.push_back(fixed(t.gpu_hours, 3));
    f.push_back(fixed(t.memory_gib_hours_saved, 3));
    return f;
}

// Columns: the figures above, then jobs per enforcement level ("enforced_dmem", ...).
const std::vector<std::string> k_columns = [] {
    std::vector<std::string> c = {
        "jobs",        "packed",        "failed",       "oom_after_packing", "requested_gib",
        "limit_gib",   "estimated_gib", "measured_gib", "gpu_hours_freed",   "estimate_error_pct",
        "oom_requeued"};
    for (const std::string &level : enforcement_keys())
        c.push_back("enforced_" + level);
    c.push_back("gpu_hours");
    c.push_back("memory_gib_hours_saved");
    return c;
}();

std::string enforcement_json(const Totals &t)
{
    std::string s = "{";
    for (const std::string &level : enforcement_keys()) {
        auto it = t.by_enforcement.find(level);
        s += (s.size() > 1 ? "," : "") + json_string(level) + ":" +
             std::to_string(it == t.by_enforcement.end() ? 0 : it->second);
    }
    return s + "}";
}

std::string period_name(const Report &r)
{
    return r.opt.by_day ? "day" : "week";
}

// "estimate error over time" as text: one row per period, errors in percent.
std::string error_table(const Report &r)
{
    char line[160];
    std::string out = "\nestimate error over time (per " + period_name(r) +
                      (r.opt.by_day ? "" : ", from its Monday") +
                      "; error = measured / limit - 1, over the calibration pairs)\n";
    snprintf(line, sizeof line, "%-10s  %6s  %12s  %9s  %5s  %8s\n", period_name(r).c_str(),
             "pairs", "median_error", "p90_error", "ooms", "requeues");
    out += line;
    for (const auto &[key, p] : r.error_over_time) {
        std::string median =
            p.errors.empty() ? "-" : fixed(100 * percentile(p.errors, 50), 1) + "%";
        std::string p90 = p.errors.empty() ? "-" : fixed(100 * percentile(p.errors, 90), 1) + "%";
        snprintf(line, sizeof line, "%-10s  %6llu  %12s  %9s  %5llu  %8llu\n", key.c_str(),
                 (unsigned long long)p.pairs, median.c_str(), p90.c_str(),
                 (unsigned long long)p.ooms, (unsigned long long)p.requeues);
        out += line;
    }
    return out;
}

std::string error_json(const Report &r)
{
    std::string out = "{\"period\":" + json_string(period_name(r)) + ",\"rows\":{";
    bool first = true;
    for (const auto &[key, p] : r.error_over_time) {
        auto pct = [&](double q) {
            return p.errors.empty() ? std::string("null") : fixed(100 * percentile(p.errors, q), 2);
        };
        out += (first ? "" : ",") + json_string(key) + ":{\"pairs\":" + std::to_string(p.pairs) +
               ",\"median_error_pct\":" + pct(50) + ",\"p90_error_pct\":" + pct(90) +
               ",\"ooms\":" + std::to_string(p.ooms) +
               ",\"requeues\":" + std::to_string(p.requeues) + "}";
        first = false;
    }
    return out + "}}";
}

std::string totals_json(const Totals &t)
{
    std::string s =
        "{\"jobs\":" + std::to_string(t.jobs) + ",\"packed\":" + std::to_string(t.packed) +
        ",\"failed\":" + std::to_string(t.failed) +
        ",\"oom_after_packing\":" + std::to_string(t.oom_after_packing) +
        ",\"requested_gib\":" + fixed(t.requested_bytes / k_gib, 3) +
        ",\"limit_gib\":" + fixed(t.limit_bytes / k_gib, 3) +
        ",\"estimated_gib\":" + fixed(t.estimated_bytes / k_gib, 3) +
        ",\"measured_jobs\":" + std::to_string(t.measured_jobs) +
        ",\"measured_gib\":" + (t.measured_jobs ? fixed(t.measured_bytes / k_gib, 3) : "null") +
        ",\"gpu_hours_freed\":" + fixed(t.gpu_hours_freed, 6) +
        ",\"elapsed_hours\":" + fixed(t.elapsed_hours, 6) + ",\"estimate_error_pct\":" +
        (t.measured_jobs ? fixed(100.0 * t.mean_abs_error(), 2) : "null") +
        ",\"oom_requeued\":" + std::to_string(t.oom_requeued) +
        ",\"enforcement\":" + enforcement_json(t) + ",\"gpu_hours\":" + fixed(t.gpu_hours, 6) +
        ",\"memory_gib_hours_saved\":" + fixed(t.memory_gib_hours_saved, 6) + "}";
    return s;
}
} // namespace

std::string render_table(const Report &r)
{
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> head = {group_name(r.opt.by)};
    head.insert(head.end(), k_columns.begin(), k_columns.end());
    rows.push_back(head);
    auto add = [&](const std::string &key, const Totals &t) {
        std::vector<std::string> row = {key};
        auto f = figures(t);
        row.insert(row.end(), f.begin(), f.end());
        rows.push_back(row);
    };
    for (const auto &[key, t] : r.groups)
        add(key, t);
    add("total", r.total);
    std::vector<size_t> width(head.size(), 0);
    for (const auto &row : rows)
        for (size_t i = 0; i < row.size(); i++)
            width[i] = std::max(width[i], row[i].size());
    std::string out;
    for (const auto &row : rows) {
        for (size_t i = 0; i < row.size(); i++) {
            std::string cell = row[i].empty() ? "-" : row[i];
            out += i == 0 ? cell + std::string(width[i] - cell.size(), ' ')
                          : "  " + std::string(width[i] - cell.size(), ' ') + cell;
        }
        out += "\n";
    }
    if (r.total.jobs == 0)
        out += "(no finished jobs in the ledger for this period)\n";
    return out + error_table(r) + (r.what_if ? render_what_if_table(*r.what_if) : "");
}

std::string render_csv(const Report &r)
{
    if (r.what_if) // CSV keeps one table: with --what-if, its jobs
        return render_what_if_csv(*r.what_if);
    std::string out = group_name(r.opt.by);
    for (const auto &c : k_columns)
        out += "," + c;
    out += "\n";
    auto add = [&](const std::string &key, const Totals &t) {
        out += csv_field(key);
        for (const auto &f : figures(t))
            out += "," + f;
        out += "\n";
    };
    for (const auto &[key, t] : r.groups)
        add(key, t);
    add("total", r.total);
    return out;
}

std::string render_json(const Report &r)
{
    std::string out = "{\"by\":" + json_string(group_name(r.opt.by));
    out += ",\"since\":" + (r.opt.since ? std::to_string(*r.opt.since) : "null");
    out += ",\"until\":" + (r.opt.until ? std::to_string(*r.opt.until) : "null");
    out += ",\"groups\":{";
    bool first = true;
    for (const auto &[key, t] : r.groups) {
        out += (first ? "" : ",") + json_string(key) + ":" + totals_json(t);
        first = false;
    }
    out += "},\"total\":" + totals_json(r.total) + ",\"freed_per_day\":{";
    first = true;
    for (const auto &[day, h] : r.freed_per_day) {
        out += (first ? "" : ",") + json_string(day) + ":" + fixed(h, 6);
        first = false;
    }
    out += "},\"estimate_vs_measured_gib\":[";
    for (size_t i = 0; i < r.accuracy.size(); i++)
        out += (i ? ",[" : "[") + fixed(r.accuracy[i].first, 3) + "," +
               fixed(r.accuracy[i].second, 3) + "]";
    out += "],\"error_over_time\":" + error_json(r);
    if (r.what_if)
        out += ",\"what_if\":" + render_what_if_json(*r.what_if);
    return out + "}\n";
}

} // namespace xmem::report
