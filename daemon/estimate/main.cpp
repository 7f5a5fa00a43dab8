// xmem-estimate (`xmem estimate`): profile a training job on the CPU, then predict its GPU
// memory. main() is a list of named steps; every expected failure is one "xmem: ..." line
// on stderr and exit status 2 (or the profiler's own status for a limit the job met:
// limit_met), and with --json also one {"error", "outcome"} object on stdout, the outcome
// naming the step that failed (docs/estimate.md, "Failures").
#include "analysis/catalog.h"
#include "analysis/estimate.h"
#include "analysis/limit.h"
#include "estimate_options.h"
#include "fitting_gpu.h"
#include "analysis/paths.h"
#include "profilers.h"
#include "profile_run.h"
#include "ranks.h"
#include "side_by_side.h"
#include "sweep.h"
#include "what_if.h"
#include "zygote.h"
#include "analysis/report.h"
#include "timeline/html.h"
#include "torch_choice.h"
#include "trace/units.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace
{

using namespace xmem;
using namespace xmem::estimate;
using namespace xmem::analysis;
using Clock = std::chrono::steady_clock;

constexpr int k_exit_ok = 0, k_exit_input = 2;
// The page's resolution: each bucket carries every stacked layer (about 20 numbers), so
// half the recorder's default keeps a page of a long capture at a few hundred KiB.
constexpr size_t k_timeline_buckets = 1024;

// The estimator's failure outcomes, one per step (docs/estimate.md); xmemd's request
// outcomes (contract/outcomes.h) name what happened to a request, not which step of an
// estimate failed, so these are the estimator's own.
enum class Outcome {
    usage,
    target,
    profile,
    trace,
    analysis,
    output,
    internal_error,
    what_if_refused
};

const char *outcome_name(Outcome o)
{
    switch (o) {
    case Outcome::usage:
        return "usage";
    case Outcome::target:
        return "target";
    case Outcome::profile:
        return "profile_failed";
    case Outcome::trace:
        return "bad_trace";
    case Outcome::analysis:
        return "analysis_failed";
    case Outcome::output:
        return "output_failed";
    case Outcome::internal_error:
        return "internal_error";
    case Outcome::what_if_refused:
        return "what_if_refused";
    }
    return "internal_error";
}

bool g_json = false; // set once from the command line, before any step runs

// The job met a limit its caller set (contract/profile_status.h): xmem-estimate exits with
// the profiler's own status for it, so xmemd reads the limit from the exit status.
bool limit_met(int profile_status)
{
    // srun (a profile job's launcher) reports its task's death by signal N as 128+N, as a
    // shell does: xmemd's verdict reads the CPU-time and file-size limits from those.
    return profile_status == XMEM_PROFILE_EXIT_NO_MEMORY ||
           profile_status == XMEM_PROFILE_EXIT_NO_PROCESSES || profile_status == 128 + SIGXCPU ||
           profile_status == 128 + SIGXFSZ;
}

// Whether a failure's line is still to be shown, or a profiler has shown its own.
enum class Echo { show, already_shown };

int fail(const std::string &message, Outcome outcome, Echo echo = Echo::show)
{
    if (echo == Echo::show)
        std::fprintf(stderr, "%s\n", message.c_str());
    if (g_json) {
        nlohmann::json j = {{"error", message}, {"outcome", outcome_name(outcome)}};
        std::fputs((j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n").c_str(),
                   stdout);
    }
    return k_exit_input;
}

// --json before the training command, even on a command line that does not parse.
bool asks_for_json(int argc, char **argv)
{
    for (int i = 1; i < argc && std::string(argv[i]) != "--"; ++i)
        if (std::string(argv[i]) == "--json")
            return true;
    return false;
}

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// The job's allocator settings: --alloc-conf, else its environment as RULES' release reads
// it: from 2.9 the generic PYTORCH_ALLOC_CONF first (the keys the simulator models; 2.14's
// AllocatorConfig.h), before 2.9 only PYTORCH_CUDA_ALLOC_CONF.
std::string job_alloc_conf(const EstimateOptions &o, sim::TorchVersion rules)
{
    if (o.alloc_conf)
        return *o.alloc_conf;
    for (const char *name : {"PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"}) {
        bool read = rules.at_least(2, 9) || std::string_view(name) == "PYTORCH_CUDA_ALLOC_CONF";
        if (const char *v = std::getenv(name); read && v && *v)
            return v;
    }
    return "";
}

// The target GPU from the catalog, which *CATALOG receives (the search for a GPU that fits a
// job the target does not hold reads it again).
Result<Target> resolve_target(const EstimateOptions &o, Catalog *catalog_out)
{
    auto path = locate_catalog(o.catalog);
    if (!path.ok())
        return Result<Target>::fail(path.error());
    auto catalog = Catalog::load(path.value());
    if (!catalog.ok())
        return Result<Target>::fail(catalog.error());
    *catalog_out = catalog.value();
    auto gpu = catalog.value().find_unambiguous(o.gpu);
    if (!gpu.ok())
        return Result<Target>::fail(gpu.error());
    // The torch rules and the allocator settings they read come from the trace (apply_torch),
    // once there is one.
    Target t{gpu.value(), sim::TorchVersion{}, "", o.margin.value_or(k_limit_margin)};
    return Result<Target>::ok(std::move(t));
}

// --torch, else the job's torch from the trace; NOTE gets the line saying it was newer than
// every release simulated.
Result<void> apply_torch(const EstimateOptions &o, const Workload &work, Target &target,
                         std::string &note)
{
    auto choice = choose_torch(o.torch, work.meta_value("torch"));
    if (!choice.ok())
        return Result<void>::fail(choice.error());
    target.torch = choice.value().rules;
    target.alloc_conf = job_alloc_conf(o, target.torch);
    target.torch_newer_than_known = choice.value().newer_than_known;
    note = choice.value().note;
    return Result<void>::success();
}

// --mode fast|auto: xmem-profile-fast first; auto runs the exact capture whenever the fast
// capture did not produce a trace: an unsupported construct (its one line, already shown,
// names the construct and says auto falls back: XMEM_FAST_FALLS_BACK) or any other failure, since a
// placeholder value can make a script fail in fast mode that runs for real. A failure of the exact
// run is what counts. An environment that cannot run a capture at all (k_profile_environment) would
// fail the exact run alike: no retry. An exact run stopped at its memory limit (k_profile_memory)
// says what that leaves. *STATUS: the exit status of the last profiler run (0 when none ran).
Result<void> run_profile_mode(const EstimateOptions &o, ProfileRequest req, int *status)
{
    if (o.mode == "exact")
        return run_profiler(req, status);
    auto fast = locate_profiler(Profiler::fast);
    if (!fast.ok()) {
        if (o.mode == "fast")
            return Result<void>::fail("xmem: --mode fast: " + fast.error().message.substr(6));
        return run_profiler(req, status);
    }
    ProfileRequest fast_req = req;
    fast_req.profiler = fast.value();
    fast_req.launcher = o.fast_launcher;
    fast_req.max_rss_mib = 0; // xmem-profile's option only
    // The fast capture's refusal is one line naming the fix, or that auto falls back.
    setenv("XMEM_FAST_FALLS_BACK", o.mode == "auto" ? "1" : "0", 1);
    auto ran = run_profiler(fast_req, status);
    unsetenv("XMEM_FAST_FALLS_BACK");
    if (ran.ok() || o.mode == "fast" || *status == k_profile_environment)
        return ran;
    if (*status != k_profile_unsupported) {
        std::fprintf(stderr, "%s\n", ran.error().message.c_str());
        std::fprintf(stderr, "xmem: estimate: falling back to the exact capture (real CPU run)\n");
    }
    auto exact_ran = run_profiler(req, status);
    if (*status == k_profile_memory) // its line suggests fast mode, which just failed
        return Result<void>::fail(
            "xmem: estimate: fast mode cannot run this job (above) and the exact capture needs "
            "more memory than this machine leaves it (run the estimate on a machine with more "
            "memory, or make the job run in fast mode: docs/fast-mode.md)");
    return exact_ran;
}

// The profilers answer torch.cuda's capability queries, pick SDPA kernels and size reduction
// staging as the target GPU would (docs/capture.md): they read its compute capability and
// multiprocessor count from the environment.
void export_target_capability(const Target &target)
{
    const auto &gpu = target.gpu;
    if (gpu.multiprocessors > 0)
        setenv("XMEM_GPU_MULTIPROCESSORS", std::to_string(gpu.multiprocessors).c_str(), 1);
    if (gpu.cc_major <= 0)
        return;
    std::string cc = std::to_string(gpu.cc_major) + "." + std::to_string(gpu.cc_minor);
    setenv("XMEM_GPU_CAPABILITY", cc.c_str(), 1);
}

// The target GPU, its capability handed to the profilers (export_target_capability).
Result<Target> target_for_capture(const EstimateOptions &o, Catalog *catalog_out)
{
    auto target = resolve_target(o, catalog_out);
    if (target.ok())
        export_target_capability(target.value());
    return target;
}

// Whether a capture runs under a launcher (a profile job, perhaps on another node).
bool launched(const EstimateOptions &o)
{
    return !o.exact_launcher.empty() || !o.fast_launcher.empty();
}

std::string current_dir()
{
    char buf[4096];
    return getcwd(buf, sizeof(buf)) ? std::string(buf) : std::string(".");
}

// Profiles the command into a trace, with the capture change WHAT_IF applied when one is
// given; returns the trace path (the caller removes a temp). *PROFILE_STATUS: the profiler's
// exit status.
Result<std::string> capture(const EstimateOptions &o, bool &is_temp, int *profile_status,
                            const std::string &what_if = "")
{
    is_temp = false;
    if (!o.trace_in.empty())
        return Result<std::string>::ok(o.trace_in);
    auto profiler = locate_profiler(Profiler::exact);
    if (!profiler.ok())
        return profiler;
    std::string out = o.keep_trace;
    if (out.empty()) {
        // A profile job's node sees the working directory (Slurm starts it there), not /tmp.
        auto tmp = make_temp_trace_path(launched(o) ? current_dir() : "");
        if (!tmp.ok())
            return tmp;
        out = tmp.value();
        is_temp = true;
    }
    ProfileRequest req{profiler.value(), out,           o.steps,   o.threads, o.timeout_seconds,
                       o.budget_seconds, o.max_rss_mib, o.command, what_if,   o.exact_launcher};
    auto ran = run_profile_mode(o, req, profile_status);
    if (!ran.ok()) {
        if (is_temp)
            unlink(out.c_str());
        return Result<std::string>::fail(ran.error());
    }
    return Result<std::string>::ok(out);
}

// The job profiled again with the capture change CHANGE, by the capture that made the
// baseline's trace (CAPTURE_KIND, its `capture` metadata), so that the two differ by the
// change alone. *STATUS: the profiler's exit status (k_profile_refused: the capture refused
// the change, and its one line is shown).
Result<Workload> profile_changed(const EstimateOptions &o, const std::string &capture_kind,
                                 const std::string &change, int *status)
{
    EstimateOptions changed = o;
    changed.mode = capture_kind == "fast" ? "fast" : "exact";
    changed.keep_trace.clear();
    bool temp = false;
    auto path = capture(changed, temp, status, change);
    if (*status == k_profile_refused)
        return Result<Workload>::fail("xmem: --what-if " + change +
                                      ": refused by the capture; its line on stderr says why");
    if (!path.ok())
        return Result<Workload>::fail(path.error());
    auto work = load_workload(path.value());
    if (temp)
        unlink(path.value().c_str());
    return work;
}

// What a failed --what-if was: the capture's refusal, its profile, or its analysis.
int fail_what_if(const std::string &message, int profile_status)
{
    if (profile_status == k_profile_refused)
        return fail(message, Outcome::what_if_refused, Echo::already_shown);
    return fail(message, profile_status ? Outcome::profile : Outcome::analysis);
}

Result<void> write_timeline(const EstimateOptions &o, const Estimate &e,
                            const timeline::TimelineRecorder &tl)
{
    std::string command; // the job as typed: its last word alone named "10" for "--classes 10"
    for (const std::string &word : o.command)
        command += (command.empty() ? "" : " ") + word;
    timeline::PageText text{"xmem estimate: " + (o.trace_in.empty() ? command : o.trace_in),
                            e.target.gpu.name + ", torch " + e.target.torch.str() + ", peak " +
                                trace::format_bytes(e.peak_bytes)};
    auto w = timeline::write_timeline_html(tl, text, o.timeline_out);
    if (!w.ok())
        return Result<void>::fail(w.error());
    return Result<void>::success();
}

// Removes the profile's temporary trace when the estimate is over: a job that does not fit
// its target is analysed again from it for the other GPUs.
struct TempTrace {
    std::string path;
    ~TempTrace()
    {
        if (!path.empty())
            unlink(path.c_str());
    }
};

// One rank role of a multi-GPU job, profiled and analysed (docs/estimate.md, "Ranks").
struct RankEstimate {
    unsigned rank = 0;
    Estimate estimate;
    TempTrace temp;    // removed at the end, unless --keep-trace named it
    std::string trace; // kept until then: a job that does not fit is analysed again
    NcclTerm nccl;     // the catalog's term for the job's NCCL (`M nccl` of the trace)
    std::string nccl_version;
};

// Where rank RANK's trace goes: --keep-trace PATH for rank 0 and PATH.rankN for the others,
// else a temporary file, which *TEMP then names for removal.
Result<std::string> rank_trace_path(const EstimateOptions &o, unsigned rank, TempTrace &temp)
{
    if (!o.keep_trace.empty())
        return Result<std::string>::ok(rank ? o.keep_trace + ".rank" + std::to_string(rank)
                                            : o.keep_trace);
    // A profile job's node sees the working directory (Slurm starts it there), not /tmp.
    auto path = make_temp_trace_path(launched(o) ? current_dir() : "");
    if (path.ok())
        temp.path = path.value();
    return path;
}

// Rank RANK's trace into PATH, with its environment as the launcher gives it: fast mode
// always (k_exact_refuses).
WorkOutcome capture_rank(const EstimateOptions &o, const Launch &launch, unsigned rank,
                         const std::string &path)
{
    export_rank(launch, rank);
    EstimateOptions one = o;
    one.command = rank_command(launch, rank);
    one.mode = "fast";
    one.keep_trace = path;
    bool temp = false;
    int status = 0;
    auto r = capture(one, temp, &status);
    return r.ok() ? WorkOutcome{true, 0, ""} : WorkOutcome{false, status, r.error().message};
}

// The option or launcher that made the job multi-rank, as the user wrote it.
std::string ranks_option(const Launch &launch)
{
    return launch.launcher.empty() ? "--world-size" : launch.launcher;
}

// Every rank role's trace: side by side, each role in a child process setting its own
// environment, where this process may use more than one CPU, else one after another; torch
// imported once for them all by a zygote, as for a sweep (zygote.h). The first role that
// failed, in rank order, is the answer.
WorkOutcome capture_ranks(const EstimateOptions &o, const Launch &launch,
                          std::vector<RankEstimate> &roles)
{
    std::vector<Work> work;
    for (RankEstimate &role : roles) {
        auto path = rank_trace_path(o, role.rank, role.temp);
        if (!path.ok())
            return {false, 0, path.error().message};
        role.trace = path.value();
        work.push_back(
            [&o, &launch, &role] { return capture_rank(o, launch, role.rank, role.trace); });
    }
    EstimateOptions job = o;
    job.command = launch.command;
    job.mode = "fast";
    Zygote zygote;
    if (start_zygote(job, {ranks_option(launch), "each rank role imports torch itself"}, zygote))
        setenv("XMEM_ZYGOTE_SOCKET", zygote.socket.c_str(), 1);
    auto outcomes = usable_cpus() > 1 ? run_side_by_side(work) : run_in_turn(work);
    unsetenv("XMEM_ZYGOTE_SOCKET");
    stop_zygote(zygote);
    for (const WorkOutcome &w : outcomes)
        if (!w.done)
            return w;
    return {true, 0, ""};
}

// Rank role OUT's estimate from its trace.
Result<void> estimate_rank(const EstimateOptions &o, const Launch &launch, const Catalog &catalog,
                           const Target &base, RankEstimate &out)
{
    auto work = load_workload(out.trace);
    if (!work.ok())
        return Result<void>::fail(work.error());
    Target target = base;
    std::string note;
    if (auto applied = apply_torch(o, work.value(), target, note); !applied.ok())
        return Result<void>::fail(applied.error());
    // NCCL's buffers, for the NCCL the job's torch loads (`M nccl`), when it has peers.
    out.nccl = catalog.nccl_for(std::string(work.value().meta_value("nccl")));
    out.nccl_version = std::string(work.value().meta_value("nccl"));
    target.nccl_bytes = launch.world_size > 1 ? out.nccl.bytes : 0;
    auto est = analyze(std::move(work.value()), target, nullptr);
    if (!est.ok())
        return Result<void>::fail(est.error());
    out.estimate = std::move(est.value());
    if (!note.empty())
        out.estimate.warnings.insert(out.estimate.warnings.begin(), note);
    return Result<void>::success();
}

// The rank whose limit sets the job's (the highest; the lower rank on a tie).
size_t highest_rank(const std::vector<RankEstimate> &roles)
{
    size_t top = 0;
    for (size_t i = 1; i < roles.size(); ++i)
        if (roles[i].estimate.limit_bytes > roles[top].estimate.limit_bytes ||
            (roles[i].estimate.limit_bytes == roles[top].estimate.limit_bytes &&
             roles[i].estimate.peak_bytes > roles[top].estimate.peak_bytes))
            top = i;
    return top;
}

const Estimate &role_of(const std::vector<RankEstimate> &roles, unsigned rank)
{
    for (const RankEstimate &r : roles)
        if (r.rank == profile_of(rank))
            return r.estimate;
    return roles.front().estimate;
}

// The highest rank's estimate (every existing field), with every rank listed.
std::string render_ranks_json(const std::vector<RankEstimate> &roles, size_t top,
                              const Launch &launch, const Timings &t)
{
    auto j = nlohmann::json::parse(render_json(roles[top].estimate, t));
    nlohmann::json ranks = nlohmann::json::array();
    for (unsigned rank = 0; rank < launch.world_size; ++rank) {
        const Estimate &e = role_of(roles, rank);
        ranks.push_back({{"rank", rank},
                         {"profiled_as", profile_of(rank)},
                         {"peak_bytes", e.peak_bytes},
                         {"limit_bytes", e.limit_bytes},
                         {"fits", e.fits},
                         {"reserved_peak_bytes", e.replay.reserved_peak},
                         {"allocated_peak_bytes", e.replay.allocated_peak}});
    }
    const RankEstimate &high = roles[top];
    j["world_size"] = launch.world_size;
    j["launcher"] = launch.launcher;
    j["nccl_bytes"] = high.estimate.target.nccl_bytes;
    j["nccl_version"] = high.nccl_version;
    if (high.estimate.target.nccl_bytes &&
        high.nccl.source.find("uncalibrated") != std::string::npos)
        j["uncalibrated_catalog_terms"].push_back("nccl.buffers_mib");
    j["highest_rank"] = roles[top].rank;
    j["ranks"] = std::move(ranks);
    return j.dump(2) + "\n";
}

std::string render_ranks_human(const std::vector<RankEstimate> &roles, size_t top,
                               const Launch &launch, const Timings &t)
{
    std::string text = render_human(roles[top].estimate, t);
    text += "Ranks: " + std::to_string(launch.world_size) + " processes, one per GPU" +
            (launch.launcher.empty() ? "" : " (" + launch.launcher + ")") +
            "; the estimate above is rank " + std::to_string(roles[top].rank) + "'s, the highest\n";
    for (const RankEstimate &r : roles) {
        std::string who = r.rank == 0 || launch.world_size == 2
                              ? "rank " + std::to_string(r.rank)
                              : "ranks 1-" + std::to_string(launch.world_size - 1);
        text += "  " + who + ": peak " + trace::format_bytes(r.estimate.peak_bytes) + ", limit " +
                trace::format_bytes(r.estimate.limit_bytes) + "\n";
    }
    return text;
}

// A job of several ranks: each rank role profiled in fast mode and analysed; the highest
// sets the limit.
int run_ranks(const EstimateOptions &o, const Launch &launch)
{
    if (o.mode == "exact")
        return fail("xmem: " + ranks_option(launch) + " " + std::to_string(launch.world_size) +
                        ": " + k_exact_refuses,
                    Outcome::usage);
    Catalog catalog;
    auto target = target_for_capture(o, &catalog);
    if (!target.ok())
        return fail(target.error().message, Outcome::target);
    Timings t;
    auto start = Clock::now();
    std::vector<RankEstimate> roles(profiled_ranks(launch.world_size).size());
    for (size_t i = 0; i < roles.size(); ++i)
        roles[i].rank = profiled_ranks(launch.world_size)[i];
    if (WorkOutcome w = capture_ranks(o, launch, roles); !w.done) {
        Echo echo = w.status == k_profile_unsupported ? Echo::already_shown : Echo::show;
        int code = fail(w.message, Outcome::profile, echo);
        return limit_met(w.status) ? w.status : code;
    }
    t.profile_seconds = seconds_since(start);
    for (RankEstimate &role : roles)
        if (auto r = estimate_rank(o, launch, catalog, target.value(), role); !r.ok())
            return fail(r.error().message, Outcome::analysis);
    size_t top = highest_rank(roles);
    Estimate &e = roles[top].estimate;
    if (!e.fits && e.uses_gpu) {
        auto fitting = smallest_fitting_gpu(catalog, roles[top].trace, e.target, e);
        if (!fitting.ok())
            return fail(fitting.error().message, Outcome::analysis);
        e.smallest_fitting_gpu = fitting.value();
    }
    for (const std::string &warning : e.warnings)
        std::fprintf(stderr, "%s\n", warning.c_str());
    std::string text = o.json ? render_ranks_json(roles, top, launch, t)
                              : render_ranks_human(roles, top, launch, t);
    std::fputs(text.c_str(), stdout);
    return k_exit_ok;
}

int run(const EstimateOptions &o)
{
    auto launch = read_launch(o.command, o.world_size);
    if (!launch.ok())
        return fail(launch.error().message, Outcome::usage);
    if (!launch.value().launcher.empty() || launch.value().world_size > 1)
        return run_ranks(o, launch.value());
    Catalog catalog;
    auto target = target_for_capture(o, &catalog);
    if (!target.ok())
        return fail(target.error().message, Outcome::target);
    Timings t;
    auto profile_start = Clock::now();
    bool temp = false;
    int profile_status = 0;
    auto trace_path = capture(o, temp, &profile_status);
    if (!trace_path.ok()) {
        // --mode fast refused: the capture's one line said what and what to do.
        Echo echo = profile_status == k_profile_unsupported ? Echo::already_shown : Echo::show;
        int status = fail(trace_path.error().message, Outcome::profile, echo);
        return limit_met(profile_status) ? profile_status : status;
    }
    t.profile_seconds = o.trace_in.empty() ? seconds_since(profile_start) : 0.0;

    auto analyze_start = Clock::now();
    TempTrace removed_at_end{temp ? trace_path.value() : ""};
    auto work = load_workload(trace_path.value());
    if (!work.ok())
        return fail(work.error().message, Outcome::trace);
    std::string torch_note;
    if (auto applied = apply_torch(o, work.value(), target.value(), torch_note); !applied.ok())
        return fail(applied.error().message, Outcome::target);
    timeline::TimelineRecorder tl(k_timeline_buckets);
    Workload analysed;
    Workload captured = o.what_if.empty() ? Workload() : work.value(); // the what-ifs' own
    auto est =
        analyze(std::move(work.value()), target.value(), o.timeline_out.empty() ? nullptr : &tl,
                o.analysed_trace.empty() ? nullptr : &analysed);
    if (!est.ok())
        return fail(est.error().message, Outcome::analysis);
    if (!est.value().fits && est.value().uses_gpu) {
        auto fitting =
            smallest_fitting_gpu(catalog, trace_path.value(), target.value(), est.value());
        if (!fitting.ok())
            return fail(fitting.error().message, Outcome::analysis);
        est.value().smallest_fitting_gpu = fitting.value();
    }
    int what_if_status = 0;
    auto profile = [&](const std::string &change) {
        std::string kind(captured.meta_value("capture"));
        return profile_changed(o, kind, change, &what_if_status);
    };
    if (auto w = add_what_ifs(o.what_if, captured, target.value(), est.value(), profile); !w.ok())
        return fail_what_if(w.error().message, what_if_status);
    if (!o.analysed_trace.empty())
        if (auto w = write_workload(analysed, o.analysed_trace); !w.ok())
            return fail(w.error().message, Outcome::output);
    if (!torch_note.empty())
        est.value().warnings.insert(est.value().warnings.begin(), torch_note);
    t.analyze_seconds = seconds_since(analyze_start);

    if (!o.timeline_out.empty())
        if (auto w = write_timeline(o, est.value(), tl); !w.ok())
            return fail(w.error().message, Outcome::output);
    for (const std::string &warning : est.value().warnings)
        std::fprintf(stderr, "%s\n", warning.c_str());
    std::string text = o.json ? render_json(est.value(), t) : render_human(est.value(), t);
    std::fputs(text.c_str(), stdout);
    return k_exit_ok;
}

} // namespace

int main(int argc, char **argv)
{
    g_json = asks_for_json(argc, argv);
    auto opts = parse_options(argc, argv);
    if (!opts.ok())
        return fail(opts.error().message, Outcome::usage);
    for (const std::string &line : opts.value().warnings)
        std::fprintf(stderr, "%s\n", line.c_str());
    if (opts.value().help) {
        std::fputs(usage_text(), stdout);
        return k_exit_ok;
    }
    try {
        if (!opts.value().sweep.empty())
            return run_sweep(opts.value());
        return run(opts.value());
    } catch (const std::exception &e) {
        // Only fatal start-up errors throw (ARCHITECTURE.md); say so rather than abort.
        int status = fail(std::string("xmem: estimate: internal error: ") + e.what() +
                              "; please report it with the trace (--keep-trace)",
                          Outcome::internal_error);
        // Out of address space in the analysis is the caller's memory limit, as a job's
        // MemoryError is (limit_met): this process knows, so its exit status says so.
        return dynamic_cast<const std::bad_alloc *>(&e) ? XMEM_PROFILE_EXIT_NO_MEMORY : status;
    }
}
