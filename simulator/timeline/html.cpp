// The allocator's chart is inline SVG written here; the stacked layers, when the recorder
// has them, are drawn by an inline script from inline JSON (stack_script.h), which keeps
// the page small: one number per layer and bucket instead of polygon coordinates.
// SVG layout: a fixed 1200x520 viewBox (it scales with the window), plot area inset for
// axes. Each series is drawn as the band between bucket minima and maxima plus a line on
// the maxima, which is exact when a bucket holds a single event.
#include "timeline/html.h"

#include "timeline/stack_script.h"

#include "trace/units.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace xmem::timeline
{

namespace
{

constexpr double k_width = 1200, k_height = 520;
constexpr double k_left = 90, k_right = 30, k_top = 56, k_bottom = 60;
constexpr double k_plot_w = k_width - k_left - k_right;
constexpr double k_plot_h = k_height - k_top - k_bottom;

std::string escape(const std::string &text)
{
    std::string out;
    for (char c : text) {
        switch (c) {
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '&':
            out += "&amp;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
        }
    }
    return out;
}

std::string num(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", value);
    return text;
}

struct Scale {
    double max_event;
    double max_bytes;
    double x(double event) const
    {
        return k_left + (max_event > 0 ? event / max_event : 0) * k_plot_w;
    }
    double y(double bytes) const { return k_top + k_plot_h - (bytes / max_bytes) * k_plot_h; }
};

// 1, 2 or 5 times a power of two/ten so tick labels are round numbers.
double nice_step(double range, int ticks, double base)
{
    double raw = range / ticks;
    double magnitude = std::pow(base, std::floor(std::log(raw) / std::log(base)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * magnitude >= raw)
            return m * magnitude;
    return 10 * magnitude;
}

void axes(std::string &svg, const Scale &s)
{
    double ystep = nice_step(s.max_bytes, 6, 2.0);
    for (double b = 0; b <= s.max_bytes + 1; b += ystep) {
        svg += "<line class=\"grid\" x1=\"" + num(k_left) + "\" x2=\"" + num(k_left + k_plot_w) +
               "\" y1=\"" + num(s.y(b)) + "\" y2=\"" + num(s.y(b)) + "\"/>";
        svg += "<text class=\"tick\" x=\"" + num(k_left - 6) + "\" y=\"" + num(s.y(b) + 4) +
               "\" text-anchor=\"end\">" + xmem::trace::format_bytes(static_cast<uint64_t>(b)) +
               "</text>";
    }
    double xstep = std::max(1.0, nice_step(std::max(1.0, s.max_event), 8, 10.0));
    for (double e = 0; e <= s.max_event; e += xstep)
        svg += "<text class=\"tick\" x=\"" + num(s.x(e)) + "\" y=\"" + num(k_top + k_plot_h + 18) +
               "\" text-anchor=\"middle\">" + std::to_string(static_cast<uint64_t>(e)) + "</text>";
    svg += "<rect class=\"frame\" x=\"" + num(k_left) + "\" y=\"" + num(k_top) + "\" width=\"" +
           num(k_plot_w) + "\" height=\"" + num(k_plot_h) + "\"/>";
    svg += "<text class=\"axis\" x=\"" + num(k_left + k_plot_w / 2) + "\" y=\"" +
           num(k_height - 12) +
           "\" text-anchor=\"middle\">event (dashed lines: step boundaries)</text>";
}

template <class Lo, class Hi>
void series(std::string &svg, const TimelineRecorder &t, const Scale &s, const char *cls, Lo lo,
            Hi hi)
{
    std::string upper, band;
    for (const Bucket &b : t.buckets()) {
        std::string p1 = num(s.x(b.first_event)) + "," + num(s.y(hi(b))) + " ";
        // A value holds until the next event: each bucket spans [first, last + 1).
        std::string p2 = num(s.x(b.last_event + 1)) + "," + num(s.y(hi(b))) + " ";
        upper += p1 + p2;
    }
    band = upper;
    for (auto it = t.buckets().rbegin(); it != t.buckets().rend(); ++it)
        band += num(s.x(it->last_event + 1)) + "," + num(s.y(lo(*it))) + " " +
                num(s.x(it->first_event)) + "," + num(s.y(lo(*it))) + " ";
    svg += std::string("<polygon class=\"band ") + cls + "\" points=\"" + band + "\"/>";
    svg += std::string("<polyline class=\"line ") + cls + "\" points=\"" + upper + "\"/>";
}

void markers(std::string &svg, const TimelineRecorder &t, const Scale &s)
{
    for (const Marker &m : t.markers()) {
        double x = s.x(static_cast<double>(m.event));
        const char *cls = m.kind == MarkerKind::step ? "iter" : "phase";
        svg += std::string("<g><title>") + escape(m.label) + " (event " + std::to_string(m.event) +
               ")</title><line class=\"" + cls + "\" x1=\"" + num(x) + "\" x2=\"" + num(x) +
               "\" y1=\"" + num(k_top) + "\" y2=\"" + num(k_top + k_plot_h) + "\"/>";
        if (m.kind != MarkerKind::phase)
            svg += "<text class=\"mark\" transform=\"translate(" + num(x + 3) + "," +
                   num(k_top + 4) + ") rotate(90)\">" + escape(m.label) + "</text>";
        svg += "</g>";
    }
}

// The dot sits on the curve; its label goes in the band above the plot (row 0 or 1), joined
// by a thin leader, so labels never cover the data, the markers or each other.
void peak(std::string &svg, const Scale &s, const Peak &p, const char *cls, const char *what,
          int row)
{
    double x = s.x(static_cast<double>(p.event)), y = s.y(static_cast<double>(p.value));
    double label_y = 18 + 17 * row;
    std::string label = std::string("peak ") + what + " " + xmem::trace::format_bytes(p.value) +
                        " at event " + std::to_string(p.event);
    bool right_half = x > k_left + k_plot_w / 2;
    svg += std::string("<line class=\"leader ") + cls + "\" x1=\"" + num(x) + "\" x2=\"" + num(x) +
           "\" y1=\"" + num(label_y + 3) + "\" y2=\"" + num(y) + "\"/>";
    svg += std::string("<circle class=\"peak ") + cls + "\" cx=\"" + num(x) + "\" cy=\"" + num(y) +
           "\" r=\"5\"/>";
    svg += std::string("<text class=\"peaklabel ") + cls + "\" x=\"" +
           num(x + (right_half ? -6 : 6)) + "\" y=\"" + num(label_y) + "\" text-anchor=\"" +
           (right_half ? "end" : "start") + "\">" + escape(label) + "</text>";
}

// A JSON string that is also safe inside <script>: no "</script>" can end it early.
std::string json_string(const std::string &text)
{
    std::string out = "\"";
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20 || c == '<' || c == '>' || c == '&') {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\u%04x", u);
            out += hex;
        } else
            out += c;
    }
    return out + "\"";
}

template <class List, class Each> std::string json_list(const List &list, Each each)
{
    std::string out = "[";
    for (const auto &item : list)
        out += (out.size() > 1 ? "," : "") + each(item);
    return out + "]";
}

std::string stack_data(const TimelineRecorder &t)
{
    auto n = [](uint64_t v) { return std::to_string(v); };
    std::string buckets = "[";
    for (size_t i = 0; i < t.buckets().size(); ++i) {
        const Bucket &b = t.buckets()[i];
        buckets += (i ? ",[" : "[") + n(b.first_event) + "," + n(b.last_event);
        for (size_t k = 0; k < t.layers().size(); ++k)
            buckets += "," + n(t.layer_values(i)[k]);
        buckets += "]";
    }
    buckets += "]";
    std::vector<const Marker *> steps;
    for (const Marker &m : t.markers())
        if (m.kind == MarkerKind::step)
            steps.push_back(&m);
    return "{\"events\":" + n(t.last_event() + 1) + ",\"groups\":" +
           json_list(t.layer_groups(),
                     [&](const LayerGroup &g) {
                         return "[" + json_string(g.title) + "," + json_string(g.id) + "," +
                                n(g.first) + "," + n(g.end) + "]";
                     }) +
           ",\"layers\":" + json_list(t.layers(), json_string) + ",\"buckets\":" + buckets +
           ",\"peak\":" + n(t.peak_allocated().event) + ",\"steps\":" +
           json_list(steps,
                     [&](const Marker *m) {
                         return "[" + n(m->event) + "," + json_string(m->label) + "]";
                     }) +
           ",\"blocks\":" +
           json_list(t.peak_blocks(),
                     [&](const PeakBlock &b) {
                         return "[" + json_string(b.module) + "," + json_string(b.op) + "," +
                                n(b.bytes) + "]";
                     }) +
           ",\"rest\":[" + n(t.peak_rest_bytes()) + "," + n(t.peak_rest_count()) + "]}";
}

// The stacked charts' place, the figures the script fills in, its tooltip, data and code.
std::string stack_section(const TimelineRecorder &t)
{
    if (t.layers().empty() || t.buckets().empty())
        return ""; // nothing to stack: the script would have no bucket to mark the peak in
    std::string html = "<div id=\"stacks\"></div>\n<p class=\"figures\">stacked at the peak:";
    for (const LayerGroup &g : t.layer_groups())
        html +=
            " " + escape(g.id) + " <output id=\"stacked-peak-" + escape(g.id) + "\"></output> B;";
    html += " hover a chart or a storage for its figures.</p>\n"
            "<pre id=\"page-errors\"></pre><div id=\"tip\"></div>\n"
            "<script type=\"application/json\" id=\"xmem-data\">" +
            stack_data(t) + "</script>\n<script>" + k_stack_script + "</script>\n";
    return html + "<h2>The allocator: allocated and reserved bytes</h2>\n";
}

const char *k_style =
    "body{font-family:sans-serif;margin:1.5em;color:#222}h1{font-size:1.3em;margin:0}"
    "p{margin:.3em 0}svg{width:100%;max-width:1200px;height:auto}"
    ".grid{stroke:#e4e4e4}.frame{fill:none;stroke:#888}.tick,.axis,.mark{font-size:12px;fill:#444}"
    ".band{stroke:none;opacity:.25}.line{fill:none;stroke-width:1.5}"
    ".reserved{fill:#d62728;stroke:#d62728}.allocated{fill:#1f77b4;stroke:#1f77b4}"
    ".line.reserved,.line.allocated{fill:none}.leader{stroke-width:.8;stroke-dasharray:2 "
    "2}.peaklabel{font-size:13px;font-weight:bold;stroke:none}"
    ".iter{stroke:#555;stroke-dasharray:4 3}.phase{stroke:#bbb;stroke-dasharray:1 3}"
    ".legend span{display:inline-block;width:1em;height:.6em;margin:0 .3em 0 1em}"
    "h2{font-size:1.1em;margin:1em 0 .2em}.layer{stroke:none}.layer:hover{opacity:.8}"
    ".legend span i{display:inline-block;width:1em;height:.6em;margin-right:.3em}"
    ".legend span:has(i){width:auto;height:auto;margin:0 1em 0 0;font-size:.85em}"
    ".peakmark{stroke:#000;stroke-width:1.5}.peaklabel{font-size:13px;font-weight:bold}"
    "#tip{display:none;position:absolute;background:#fff;border:1px solid #888;padding:.4em;"
    "font-size:12px;pointer-events:none;max-width:32em}#tip td,#tip th{padding:0 .5em 0 0}"
    "#page-errors{color:#b00}#page-errors:empty{display:none}";

} // namespace

std::string render_timeline_html(const TimelineRecorder &t, const PageText &text)
{
    Scale s{static_cast<double>(t.last_event() + 1),
            std::max(1.0, static_cast<double>(t.peak_reserved().value) * 1.08)};
    s.max_bytes = std::max(s.max_bytes, static_cast<double>(t.peak_allocated().value) * 1.08);
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + num(k_width) +
                      " " + num(k_height) + "\" role=\"img\">";
    axes(svg, s);
    markers(svg, t, s);
    series(
        svg, t, s, "reserved", [](const Bucket &b) { return b.min_reserved; },
        [](const Bucket &b) { return b.max_reserved; });
    series(
        svg, t, s, "allocated", [](const Bucket &b) { return b.min_allocated; },
        [](const Bucket &b) { return b.max_allocated; });
    peak(svg, s, t.peak_reserved(), "reserved", "reserved", 0);
    peak(svg, s, t.peak_allocated(), "allocated", "allocated", 1);
    svg += "</svg>";

    std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                       escape(text.title) + "</title><style>" + k_style + "</style></head><body>\n";
    html += "<h1>" + escape(text.title) + "</h1><p>" + escape(text.subtitle) + "</p>\n";
    html += stack_section(t);
    html += "<p class=\"legend\"><span style=\"background:#d62728\"></span>reserved (segments)"
            "<span style=\"background:#1f77b4\"></span>allocated (blocks)</p>\n";
    html += svg + "\n<p>" + std::to_string(t.samples()) + " events; each point covers " +
            std::to_string(t.bucket_width()) +
            " event(s), shaded bands span the min..max inside it, peaks are exact.";
    if (t.markers_dropped())
        html += " " + std::to_string(t.markers_dropped()) + " markers not shown.";
    html += " Hover a dashed line for its label.</p>\n</body></html>\n";
    return html;
}

Result<uint64_t> write_timeline_html(const TimelineRecorder &timeline, const PageText &text,
                                     const std::string &path)
{
    std::string html = render_timeline_html(timeline, text);
    std::FILE *file = std::fopen(path.c_str(), "wb");
    if (!file)
        return Result<uint64_t>::fail("xmem: " + path +
                                      ": cannot write timeline: " + std::strerror(errno));
    bool ok = std::fwrite(html.data(), 1, html.size(), file) == html.size();
    ok = (std::fclose(file) == 0) && ok;
    if (!ok)
        return Result<uint64_t>::fail("xmem: " + path +
                                      ": cannot write timeline: " + std::strerror(errno));
    return Result<uint64_t>::ok(html.size());
}

} // namespace xmem::timeline
