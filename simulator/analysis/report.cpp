#include "analysis/report.h"

#include "analysis/limit.h"
#include "trace/units.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace xmem::analysis
{

namespace
{

using trace::format_bytes;

nlohmann::json breakdown_json(const Estimate &e)
{
    nlohmann::json b = nlohmann::json::object();
    for (size_t i = 0; i < k_categories; ++i)
        b[category_name(static_cast<Category>(i))] = e.replay.live_at_peak[i];
    b["allocator_cache"] = e.cache_bytes;
    b["cuda_context"] = e.context_bytes;
    b["outside_allocator"] = e.outside_bytes;
    return b;
}

nlohmann::json category_peaks_json(const Estimate &e)
{
    nlohmann::json b = nlohmann::json::object();
    for (size_t i = 0; i < k_categories; ++i)
        b[category_name(static_cast<Category>(i))] = e.replay.category_peak[i];
    return b;
}

nlohmann::json corrections_json(const Estimate &e)
{
    auto drop = [](const DropCount &d) {
        return nlohmann::json{{"count", d.count}, {"bytes", d.bytes}};
    };
    return {
        {"dropped_host", drop(e.filter.host)},
        {"dropped_host_scalars", drop(e.filter.scalar)},
        {"dropped_cpu_temporaries", drop(e.filter.cpu_temp)},
        {"input_copies_added", e.input_copies},
        {"zero_grad_rewritten", e.grads.applied},
        {"zero_grad_note", e.grads.reason},
        {"optimizer", e.foreach.optimizer},
        {"foreach_lists_added", e.foreach.applied ? e.foreach.lists : 0},
        {"batched_gemm_copies_merged", e.gemm_copies.merged},
        {"cublas_workspaces", e.workspaces.cublas},
        {"cublaslt_workspaces", e.workspaces.cublaslt},
        {"cudnn_workspaces", e.workspaces.cudnn},
        {"uses_cudnn", e.workspaces.uses_cudnn},
    };
}

nlohmann::json ranking_json(const Ranking &r)
{
    nlohmann::json top = nlohmann::json::array();
    for (const Share &s : r.top)
        top.push_back({{"name", s.name}, {"bytes", s.bytes}});
    return {{"top", top}, {"rest_bytes", r.rest_bytes}, {"rest_count", r.rest_count}};
}

nlohmann::json what_ifs_json(const Estimate &e)
{
    nlohmann::json list = nlohmann::json::array();
    for (const WhatIf &w : e.what_ifs)
        list.push_back({{"change", w.change},
                        {"peak_bytes", w.peak_bytes},
                        {"limit_bytes", w.limit_bytes},
                        {"fits", w.fits}});
    return list;
}

// The first iterations only: set-up, the first step and the start of the steady state are
// where peaks differ; a long capture would otherwise print thousands of identical rows.
constexpr size_t k_max_iterations_listed = 8;

// KEY: "step", or "iteration" for the list's first spelling (per_iteration).
nlohmann::json iterations_json(const Estimate &e, const char *key)
{
    nlohmann::json list = nlohmann::json::array();
    for (const IterationPeak &p : e.replay.iterations)
        if (list.size() < k_max_iterations_listed)
            list.push_back({{key, p.iteration},
                            {"reserved_peak_bytes", p.reserved},
                            {"allocated_peak_bytes", p.allocated}});
    return list;
}

} // namespace

std::string render_json(const Estimate &e, const Timings &t)
{
    const ReplayResult &r = e.replay;
    nlohmann::json j = {
        {"mode", e.capture_mode},
        {"gpu", e.target.gpu.name},
        {"gpu_total_bytes", e.target.gpu.total_bytes},
        {"torch", e.target.torch.str()},
        {"torch_newer_than_known", e.target.torch_newer_than_known},
        {"torch_version", e.torch_version},
        {"python", e.python},
        {"amp", e.amp},
        {"steps", e.steps},
        {"iterations", e.steps}, // the key's first spelling, which readers of the JSON know
        {"peak_bytes", e.peak_bytes},
        {"limit_bytes", e.limit_bytes},
        {"workspace_bound_peak_bytes", e.workspace_bound_peak_bytes},
        {"reserved_peak_bytes", r.reserved_peak},
        {"allocated_peak_bytes", r.allocated_peak},
        {"first_step_reserved_peak_bytes", r.first_reserved_peak},
        {"first_iteration_reserved_peak_bytes", r.first_reserved_peak}, // first spelling
        {"steady_reserved_peak_bytes",
         r.has_steady ? nlohmann::json(r.steady_reserved_peak) : nlohmann::json()},
        {"context_bytes", e.context_bytes},
        {"catalog_cudnn_context_bytes", e.target.gpu.cudnn_context_bytes},
        {"outside_allocator_bytes", e.outside_bytes},
        {"fits", e.fits},
        {"fits_reason", e.fits_reason},
        {"uses_gpu", e.uses_gpu},
        {"warnings", e.warnings},
        {"uncalibrated_catalog_terms", uncalibrated_terms(e.target.gpu)},
        {"oom", r.oom},
        {"margin", e.target.margin},
        {"coverage", k_limit_coverage},
        {"breakdown", breakdown_json(e)},
        {"category_peak_bytes", category_peaks_json(e)},
        {"peak_by_module", ranking_json(r.attribution.modules)},
        {"peak_by_op", ranking_json(r.attribution.ops)},
        {"per_step", iterations_json(e, "step")},
        {"per_iteration", iterations_json(e, "iteration")}, // first spelling
        {"corrections", corrections_json(e)},
        {"what_if", what_ifs_json(e)},
        {"profile_seconds", t.profile_seconds},
        {"analyze_seconds", t.analyze_seconds},
    };
    if (!e.target.alloc_conf.empty())
        j["alloc_conf"] = e.target.alloc_conf;
    if (r.oom)
        j["oom_message"] = r.oom_message;
    j["smallest_fitting_gpu"] =
        e.smallest_fitting_gpu.empty() ? nlohmann::json() : nlohmann::json(e.smallest_fitting_gpu);
    return j.dump(2) + "\n";
}

namespace
{

void line(std::string &out, const char *label, uint64_t bytes, uint64_t total)
{
    char buf[160];
    double pct = total ? 100.0 * double(bytes) / double(total) : 0.0;
    std::snprintf(buf, sizeof buf, "  %-22s %12s  %5.1f %%\n", label, format_bytes(bytes).c_str(),
                  pct);
    out += buf;
}

// A ranking's names can be long module paths: they get their own column width.
void ranking(std::string &out, const char *what, const Ranking &r, uint64_t live)
{
    if (r.top.empty())
        return;
    size_t width = 0;
    for (const Share &s : r.top)
        width = std::max(width, s.name.size());
    out += std::string("live at the peak, by ") + what + ":\n";
    char buf[512];
    auto row = [&](const std::string &name, uint64_t bytes) {
        double pct = live ? 100.0 * double(bytes) / double(live) : 0.0;
        std::snprintf(buf, sizeof buf, "  %-*s %12s  %5.1f %%\n", static_cast<int>(width),
                      name.c_str(), format_bytes(bytes).c_str(), pct);
        out += buf;
    };
    for (const Share &s : r.top)
        row(s.name, s.bytes);
    if (r.rest_count)
        row("the rest (" + std::to_string(r.rest_count) + ")", r.rest_bytes);
}

// The widest a line of prose gets in the text output; a word longer than this keeps its own
// line whole.
constexpr size_t k_text_width = 100;

// TEXT (one paragraph) as lines of at most k_text_width columns, broken between words, the
// lines after the first indented: a long message (an OOM's) is never cut mid-word.
void prose(std::string &out, const std::string &text)
{
    const std::string indent = "    ";
    size_t column = 0, pos = 0;
    while (pos < text.size()) {
        size_t end = text.find(' ', pos);
        if (end == std::string::npos)
            end = text.size();
        std::string word = text.substr(pos, end - pos);
        pos = end + 1;
        if (word.empty())
            continue;
        if (column > 0 && column + 1 + word.size() > k_text_width) {
            out += "\n" + indent;
            column = indent.size();
        } else if (column > 0) {
            out += ' ';
            ++column;
        }
        out += word;
        column += word.size();
    }
    out += '\n';
}

// Whether the job fits and, when not, what it needs: the limit only for a job that fits, the
// smallest catalog GPU that would hold it otherwise.
void fit_lines(std::string &out, const Estimate &e)
{
    const ReplayResult &r = e.replay;
    std::string total = format_bytes(e.target.gpu.total_bytes);
    if (e.fits || !e.uses_gpu) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "recommended limit %s  (margin %.1f %%; ",
                      format_bytes(e.limit_bytes).c_str(), 100 * e.target.margin);
        prose(out, buf + std::string(k_limit_coverage) + ")");
    }
    if (r.oom)
        prose(out, "fits: NO, the simulated allocator ran out of memory on " + e.target.gpu.name +
                       " (" + total + "): " + r.oom_message);
    else if (!e.uses_gpu)
        prose(out, std::string("fits: ") + (e.fits ? "yes" : "NO") + ", but only as " +
                       e.fits_reason + " (" + total + " on the GPU)");
    else
        prose(out, std::string("fits: ") + (e.fits ? "yes" : "NO") + " (" + total + " on the GPU)");
    if (e.fits || !e.uses_gpu)
        return;
    if (e.smallest_fitting_gpu.empty())
        prose(out, "no GPU of the catalog holds this peak: no limit to recommend");
    else
        prose(out, "smallest GPU of the catalog that fits: " + e.smallest_fitting_gpu +
                       " (no limit recommended for " + e.target.gpu.name + ")");
}

uint64_t live_total(const ReplayResult &r)
{
    uint64_t sum = 0;
    for (uint64_t b : r.live_at_peak)
        sum += b;
    return sum;
}

} // namespace

std::string render_human(const Estimate &e, const Timings &t)
{
    const ReplayResult &r = e.replay;
    std::string out;
    char buf[512];
    std::snprintf(
        buf, sizeof buf,
        "xmem estimate: %s, PyTorch %s%s (captured with torch %s, %u steps, amp "
        "%s)\n",
        e.target.gpu.name.c_str(), e.target.torch.str().c_str(),
        e.target.alloc_conf.empty() ? ""
                                    : (", PYTORCH_CUDA_ALLOC_CONF=" + e.target.alloc_conf).c_str(),
        e.torch_version.empty() ? "unknown" : e.torch_version.c_str(), e.steps, e.amp.c_str());
    out += buf;
    if (!e.python.empty())
        out += "interpreter " + e.python + "\n";
    std::snprintf(buf, sizeof buf, "peak GPU memory   %s  (%s)\n",
                  format_bytes(e.peak_bytes).c_str(),
                  r.oom ? "what the job needs, simulated without the GPU's limit"
                        : "as nvidia-smi would show it");
    out += buf;
    fit_lines(out, e);
    std::snprintf(buf, sizeof buf, "reserved peak %s (step 1: %s, steady: %s), allocated peak %s\n",
                  format_bytes(r.reserved_peak).c_str(),
                  format_bytes(r.first_reserved_peak).c_str(),
                  r.has_steady ? format_bytes(r.steady_reserved_peak).c_str() : "n/a",
                  format_bytes(r.allocated_peak).c_str());
    out += buf;
    out += "breakdown at the peak:\n";
    for (size_t i = 0; i < k_categories; ++i)
        line(out, category_name(static_cast<Category>(i)), r.live_at_peak[i], e.peak_bytes);
    line(out, "allocator cache/frag.", e.cache_bytes, e.peak_bytes);
    line(out, "CUDA context", e.context_bytes, e.peak_bytes);
    if (e.outside_bytes)
        line(out, "outside allocator", e.outside_bytes, e.peak_bytes);
    for (const WhatIf &w : e.what_ifs) {
        double delta = e.peak_bytes ? 100.0 * (double(w.peak_bytes) - double(e.peak_bytes)) /
                                          double(e.peak_bytes)
                                    : 0.0;
        std::snprintf(buf, sizeof buf, "what if %s: peak %s (%+.1f %%), limit %s, fits: %s\n",
                      w.change.c_str(), format_bytes(w.peak_bytes).c_str(), delta,
                      format_bytes(w.limit_bytes).c_str(), w.fits ? "yes" : "NO");
        out += buf;
    }
    ranking(out, "module", r.attribution.modules, live_total(r));
    ranking(out, "op", r.attribution.ops, live_total(r));
    if (auto guessed = uncalibrated_terms(e.target.gpu); !guessed.empty()) {
        std::string list;
        for (const std::string &k : guessed)
            list += (list.empty() ? "" : ", ") + k;
        prose(out, "uncalibrated catalog terms for " + e.target.gpu.name + ": " + list +
                       " (budgets, not measured on this GPU)");
    }
    prose(out, "gradients: " + e.grads.reason);
    std::snprintf(buf, sizeof buf, "time: profile %.2f s, analysis %.3f s\n", t.profile_seconds,
                  t.analyze_seconds);
    out += buf;
    return out;
}

} // namespace xmem::analysis
