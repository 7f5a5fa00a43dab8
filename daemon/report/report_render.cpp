// report_render.cpp — table, CSV and JSON renderings of a Report. GiB are 2^30 bytes.
#include "report.h"

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
    return {std::to_string(t.jobs),
            std::to_string(t.packed),
            std::to_string(t.failed),
            std::to_string(t.oom_after_packing),
            fixed(t.requested_bytes / k_gib, 1),
            fixed(t.granted_bytes / k_gib, 1),
            fixed(t.estimated_bytes / k_gib, 1),
            t.measured_jobs ? fixed(t.measured_bytes / k_gib, 1) : "",
            fixed(t.gpu_hours_freed, 3),
            t.measured_jobs ? fixed(100.0 * t.mean_abs_error(), 1) : ""};
}

const std::vector<std::string> k_columns = {
    "jobs",        "packed",        "failed",       "oom_after_packing", "requested_gib",
    "granted_gib", "estimated_gib", "measured_gib", "gpu_hours_freed",   "estimate_error_pct"};

std::string totals_json(const Totals &t)
{
    std::string s =
        "{\"jobs\":" + std::to_string(t.jobs) + ",\"packed\":" + std::to_string(t.packed) +
        ",\"failed\":" + std::to_string(t.failed) +
        ",\"oom_after_packing\":" + std::to_string(t.oom_after_packing) +
        ",\"requested_gib\":" + fixed(t.requested_bytes / k_gib, 3) +
        ",\"granted_gib\":" + fixed(t.granted_bytes / k_gib, 3) +
        ",\"estimated_gib\":" + fixed(t.estimated_bytes / k_gib, 3) +
        ",\"measured_jobs\":" + std::to_string(t.measured_jobs) +
        ",\"measured_gib\":" + (t.measured_jobs ? fixed(t.measured_bytes / k_gib, 3) : "null") +
        ",\"gpu_hours_freed\":" + fixed(t.gpu_hours_freed, 6) +
        ",\"elapsed_hours\":" + fixed(t.elapsed_hours, 6) + ",\"estimate_error_pct\":" +
        (t.measured_jobs ? fixed(100.0 * t.mean_abs_error(), 2) : "null") + "}";
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
    return out;
}

std::string render_csv(const Report &r)
{
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
    return out + "]}\n";
}

} // namespace xmem::report
