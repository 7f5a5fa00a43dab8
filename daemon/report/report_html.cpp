// report_html.cpp — one self-contained page (inline SVG and CSS, no network): savings over
// time, GPU-hours freed per user and per account, estimate against measured peak. Totals are
// also carried as data-* attributes so a test (or a script) can read them back.
#include "report.h"
#include "calibrate.h"
#include "whatif.h"

#include <algorithm>
#include <cstdio>

namespace xmem::report
{

namespace
{
std::string fixed(double v, int digits)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%.*f", digits, v);
    return buf;
}

// Horizontal bars of GPU-hours freed, one per group.
std::string bars(const std::string &id, const std::map<std::string, Totals> &groups)
{
    double top = 0;
    for (const auto &[k, t] : groups)
        top = std::max(top, t.gpu_hours_freed);
    int h = 24 * (int)groups.size() + 10;
    std::string s =
        "<svg id=\"" + id + "\" width=\"640\" height=\"" + std::to_string(h) + "\" role=\"img\">";
    int y = 5;
    for (const auto &[k, t] : groups) {
        double w = top > 0 ? 400.0 * t.gpu_hours_freed / top : 0;
        s += "<text x=\"0\" y=\"" + std::to_string(y + 15) + "\">" + html_escape(k) + "</text>";
        s += "<rect class=\"bar\" data-key=\"" + html_escape(k) + "\" data-gpu-hours-freed=\"" +
             fixed(t.gpu_hours_freed, 6) + "\" data-jobs=\"" + std::to_string(t.jobs) +
             "\" x=\"160\" y=\"" + std::to_string(y) + "\" width=\"" + fixed(w, 1) +
             "\" height=\"18\" fill=\"#3b7dd8\"></rect>";
        s += "<text x=\"" + fixed(165 + w, 1) + "\" y=\"" + std::to_string(y + 15) + "\">" +
             fixed(t.gpu_hours_freed, 3) + " GPU-h</text>";
        y += 24;
    }
    return s + "</svg>";
}

// Cumulative GPU-hours freed, one point per day with jobs.
std::string over_time(const std::map<std::string, double> &per_day)
{
    double total = 0;
    for (const auto &[d, h] : per_day)
        total += h;
    std::string s = "<svg id=\"over-time\" width=\"640\" height=\"220\" role=\"img\">"
                    "<line x1=\"40\" y1=\"200\" x2=\"620\" y2=\"200\" stroke=\"#888\"></line>";
    std::string pts;
    double run = 0;
    size_t i = 0, n = per_day.size();
    for (const auto &[d, h] : per_day) {
        run += h;
        double x = 40 + (n > 1 ? 580.0 * (double)i / (double)(n - 1) : 290);
        double y = 200 - (total > 0 ? 180.0 * run / total : 0);
        pts += fixed(x, 1) + "," + fixed(y, 1) + " ";
        s += "<circle class=\"day\" data-day=\"" + d + "\" data-gpu-hours-freed=\"" + fixed(h, 6) +
             "\" cx=\"" + fixed(x, 1) + "\" cy=\"" + fixed(y, 1) +
             "\" r=\"3\" fill=\"#2a9d55\"><title>" + d + ": " + fixed(run, 3) +
             " GPU-h</title></circle>";
        i++;
    }
    if (!per_day.empty())
        s += "<text x=\"40\" y=\"215\">" + per_day.begin()->first +
             "</text><text x=\"540\" "
             "y=\"215\">" +
             per_day.rbegin()->first + "</text><text x=\"0\" y=\"16\">" + fixed(total, 3) +
             " GPU-h</text>";
    return s + "<polyline points=\"" + pts +
           "\" fill=\"none\" stroke=\"#2a9d55\"></polyline></svg>";
}

// "Estimate error over time": a table, one row per period, figures as data-* attributes.
std::string error_rows(const Report &r)
{
    std::string s = "<table id=\"error-over-time\" data-period=\"" +
                    std::string(r.opt.by_day ? "day" : "week") + "\"><tr><th>" +
                    (r.opt.by_day ? "day" : "week from") +
                    "</th><th>pairs</th><th>median error</th><th>p90 error</th><th>CUDA OOMs"
                    "</th><th>requeues</th></tr>";
    for (const auto &[key, p] : r.error_over_time) {
        auto pct = [&](double q) {
            return p.errors.empty() ? std::string("") : fixed(100 * percentile(p.errors, q), 2);
        };
        s += "<tr class=\"period\" data-key=\"" + key + "\" data-pairs=\"" +
             std::to_string(p.pairs) + "\" data-median-error-pct=\"" + pct(50) +
             "\" data-p90-error-pct=\"" + pct(90) + "\" data-ooms=\"" + std::to_string(p.ooms) +
             "\" data-requeues=\"" + std::to_string(p.requeues) + "\"><td>" + key + "</td><td>" +
             std::to_string(p.pairs) + "</td><td>" + (pct(50).empty() ? "&ndash;" : pct(50) + "%") +
             "</td><td>" + (pct(90).empty() ? "&ndash;" : pct(90) + "%") + "</td><td>" +
             std::to_string(p.ooms) + "</td><td>" + std::to_string(p.requeues) + "</td></tr>";
    }
    return s + "</table><p>Error: measured peak / limit the job ran under &minus; 1, over "
               "the jobs <code>xmem calibrate</code> learns from (an OOM on a share counts as "
               "a pair without a figure).</p>";
}

// Estimate (x) against measured peak (y), GiB, with the diagonal.
std::string scatter(const std::vector<std::pair<double, double>> &pts)
{
    double top = 1;
    for (const auto &[e, m] : pts)
        top = std::max({top, e, m});
    std::string s = "<svg id=\"accuracy\" width=\"320\" height=\"322\" role=\"img\">"
                    "<line x1=\"20\" y1=\"300\" x2=\"300\" y2=\"20\" stroke=\"#bbb\"></line>";
    for (const auto &[e, m] : pts)
        s += "<circle class=\"point\" cx=\"" + fixed(20 + 280 * e / top, 1) + "\" cy=\"" +
             fixed(300 - 280 * m / top, 1) + "\" r=\"3\" fill=\"#d8703b\"></circle>";
    s += "<text x=\"180\" y=\"316\">estimate &#8594;</text>"
         "<text x=\"0\" y=\"12\">measured &#8593; (max " +
         fixed(top, 1) + " GiB)</text>";
    if (pts.empty())
        s += "<text x=\"40\" y=\"160\">no measured peaks (no NVML on the nodes)</text>";
    return s + "</svg>";
}
} // namespace

std::string render_html(const Report &r)
{
    const Totals &t = r.total;
    std::string h = "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
                    "<title>xmem: what packing saved</title><style>"
                    "body{font-family:sans-serif;margin:2em}svg text{font-size:12px}"
                    "dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}"
                    "</style></head><body>";
    h += "<h1>xmem: what packing saved</h1><dl id=\"totals\" data-jobs=\"" +
         std::to_string(t.jobs) + "\" data-packed=\"" + std::to_string(t.packed) +
         "\" data-failed=\"" + std::to_string(t.failed) + "\" data-oom-after-packing=\"" +
         std::to_string(t.oom_after_packing) + "\" data-oom-requeued=\"" +
         std::to_string(t.oom_requeued) + "\" data-gpu-hours-freed=\"" +
         fixed(t.gpu_hours_freed, 6) + "\" data-requested-gib=\"" +
         fixed(t.requested_bytes / 1073741824.0, 3) + "\" data-limit-gib=\"" +
         fixed(t.limit_bytes / 1073741824.0, 3) + "\">";
    auto item = [&](const std::string &k, const std::string &v) {
        h += "<dt>" + k + "</dt><dd>" + v + "</dd>";
    };
    item("finished jobs", std::to_string(t.jobs));
    item("packed onto a share", std::to_string(t.packed));
    item("failed (exit &ne; 0 or CUDA OOM)", std::to_string(t.failed));
    item("CUDA OOM after packing", std::to_string(t.oom_after_packing));
    item("requeued by xmem after an OOM", std::to_string(t.oom_requeued));
    std::string levels;
    for (const auto &[level, n] : t.by_enforcement)
        levels += (levels.empty() ? "" : ", ") + html_escape(level) + " " + std::to_string(n);
    item("jobs per enforcement level", levels.empty() ? "&ndash;" : levels);
    item("GPU memory requested / limit / estimated",
         fixed(t.requested_bytes / 1073741824.0, 1) + " / " +
             fixed(t.limit_bytes / 1073741824.0, 1) + " / " +
             fixed(t.estimated_bytes / 1073741824.0, 1) + " GiB");
    item("GPU-hours freed", fixed(t.gpu_hours_freed, 3));
    h += "</dl><p>GPU-hours freed: for each packed job, (1 &minus; limit / GPU capacity) "
         "&times; elapsed hours.</p>";
    h += "<h2>Savings over time (cumulative)</h2>" + over_time(r.freed_per_day);
    h += "<h2>Per user</h2>" + bars("by-user", r.by_user);
    h += "<h2>Per account</h2>" + bars("by-account", r.by_account);
    h += "<h2>Estimate vs measured peak (GiB)</h2>" + scatter(r.accuracy);
    h += "<h2>Estimate error over time</h2>" + error_rows(r);
    if (r.what_if)
        h += render_what_if_html(*r.what_if);
    // Proves in a headless browser that the page parsed and its figures are in the DOM.
    h += "<script>document.body.dataset.rendered=document.querySelectorAll('svg').length;"
         "</script></body></html>\n";
    return h;
}

} // namespace xmem::report
