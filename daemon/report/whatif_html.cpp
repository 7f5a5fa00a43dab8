// whatif_html.cpp — the what-if part of the report's page: the three columns of totals as
// data-* attributes (a test or a script reads them back) and one inline SVG: each job's
// measured peak as a bar, sorted, with what it would be held to under the policy in force and
// under the changed one (its limit on a share, the whole GPU otherwise), OOMs in red.
#include "whatif.h"

#include <algorithm>
#include <cstdio>

namespace xmem::report
{

namespace
{
constexpr double k_mib = 1048576.0;

std::string fixed(double v, int digits)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

// The bar's height: the peak, or for an OOM on a share (no peak) the limit it ran past.
double shown_peak(const WhatIfJob &j)
{
    return (double)(j.censored ? j.limit_bytes : j.measured_bytes) / k_mib;
}

std::string side_attrs(const std::string &name, const Side &s)
{
    return " data-" + name + "-packed=\"" + std::to_string(s.packed) + "\" data-" + name +
           "-oom=\"" + std::to_string(s.oom) + "\" data-" + name + "-gpu-hours-freed=\"" +
           fixed(s.gpu_hours_freed, 6) + "\"";
}

// A horizontal tick at `mib` (drawn at the top, dashed, when above the scale: a whole GPU).
std::string tick(const char *cls, double x, double w, double mib, double top, const char *colour)
{
    bool above = mib > top;
    double y = 230 - 210 * std::min(mib, top) / top;
    return std::string("<line class=\"") + cls + "\" x1=\"" + fixed(x - 1, 1) + "\" x2=\"" +
           fixed(x + w + 1, 1) + "\" y1=\"" + fixed(y, 1) + "\" y2=\"" + fixed(y, 1) +
           "\" stroke=\"" + colour + "\" stroke-width=\"2\"" +
           (above ? " stroke-dasharray=\"3,2\"" : "") + "></line>";
}

std::string job_bar(const WhatIfJob &j, double x, double w, double top)
{
    double peak = shown_peak(j);
    double h = 210 * std::min(peak, top) / top;
    double current = (double)held_to(j, j.current.share.packed) / k_mib;
    double next = (double)held_to(j, j.what_if.share.packed) / k_mib;
    std::string s = "<g class=\"what-if-job\" data-job=\"" + std::to_string(j.job_id) +
                    "\" data-peak-mib=\"" + fixed(peak, 0) + "\" data-oom-on-share=\"" +
                    (j.censored ? "1" : "0") + "\" data-current-held-mib=\"" + fixed(current, 0) +
                    "\" data-what-if-held-mib=\"" + fixed(next, 0) + "\" data-current-oom=\"" +
                    (j.current.oom ? "1" : "0") + "\" data-what-if-oom=\"" +
                    (j.what_if.oom ? "1" : "0") + "\">";
    s += "<title>job " + std::to_string(j.job_id) + ": peak " + fixed(peak, 0) +
         (j.censored ? " MiB (out of memory on its share)" : " MiB") + "; held to " +
         fixed(current, 0) + " MiB now, " + fixed(next, 0) + " MiB with the change" +
         (j.what_if.oom ? ": out of memory" : "") + "</title>";
    s += "<rect class=\"peak\" x=\"" + fixed(x, 1) + "\" y=\"" + fixed(230 - h, 1) + "\" width=\"" +
         fixed(w, 1) + "\" height=\"" + fixed(h, 1) + "\" fill=\"" +
         (j.what_if.oom ? "#d8403b" : "#3b7dd8") + "\"></rect>";
    s += tick("held-current", x, w, current, top, "#555");
    s += tick("held-what-if", x, w, next, top, "#e0a020");
    if (j.what_if.oom)
        s += "<text class=\"oom\" x=\"" + fixed(x, 1) + "\" y=\"" + fixed(226 - h, 1) +
             "\" fill=\"#d8403b\">&#215;</text>";
    return s + "</g>";
}

std::string jobs_svg(const WhatIf &w)
{
    std::vector<const WhatIfJob *> sorted;
    double top = 1;
    for (const WhatIfJob &j : w.jobs) {
        sorted.push_back(&j);
        top = std::max({top, shown_peak(j), (double)j.limit_bytes / k_mib});
    }
    top *= 1.25; // room above the tallest limit; a whole GPU beyond it is drawn dashed at the top
    std::stable_sort(sorted.begin(), sorted.end(), [](const WhatIfJob *a, const WhatIfJob *b) {
        return shown_peak(*a) < shown_peak(*b);
    });
    double slot = sorted.empty() ? 0 : std::min(40.0, 580.0 / (double)sorted.size());
    std::string s = "<svg id=\"what-if-jobs\" width=\"640\" height=\"260\" role=\"img\">"
                    "<line x1=\"40\" y1=\"230\" x2=\"620\" y2=\"230\" stroke=\"#888\"></line>"
                    "<text x=\"0\" y=\"14\">MiB (top " +
                    fixed(top, 0) + ")</text>";
    for (std::size_t i = 0; i < sorted.size(); i++)
        s += job_bar(*sorted[i], 40 + slot * (double)i + slot * 0.15, slot * 0.7, top);
    s += "<text x=\"40\" y=\"250\">jobs, by measured peak &#8594;</text>";
    if (sorted.empty())
        s += "<text x=\"60\" y=\"120\">no job with an estimate and a measured peak</text>";
    return s + "</svg>";
}
} // namespace

std::string render_what_if_html(const WhatIf &w)
{
    std::string changes;
    for (const Change &c : w.changes)
        changes += (changes.empty() ? "" : ",") + c.key + "=" + c.value;
    std::string h = "<h2>What if " + html_escape(changes) +
                    "</h2><dl id=\"what-if\" data-changes=\"" + html_escape(changes) +
                    "\" data-considered=\"" + std::to_string(w.jobs.size()) + "\"" +
                    side_attrs("actual", w.actual) + side_attrs("current", w.current) +
                    side_attrs("what-if", w.what_if) + ">";
    auto item = [&](const std::string &name, const Side &s) {
        h += "<dt>" + name + "</dt><dd>" + std::to_string(s.packed) + " of " +
             std::to_string(w.jobs.size()) + " packed, " + std::to_string(s.oom) +
             " out of memory, " + fixed(s.gpu_hours_freed, 3) + " GPU-hours freed</dd>";
    };
    item("actual", w.actual);
    item("policy in force, replayed", w.current);
    item("with " + html_escape(changes), w.what_if);
    h += "</dl>" + jobs_svg(w);
    return h + "<p>Bars: each job's measured peak (an OOM on a share: its limit), sorted. "
               "Grey: what it is held to under the policy in force; amber: with the change "
               "(its limit on a share, the whole GPU otherwise, dashed at the top). Red, "
               "&#215;: it would run out of memory.</p>";
}

} // namespace xmem::report
