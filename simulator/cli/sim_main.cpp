// xmem-sim: replay a trace through the simulated caching allocator (`xmem sim`).
// main() is a list of named steps; every expected failure is one "xmem: ..." line, exit 2.
#include "cli/replay.h"
#include "cli/sim_options.h"
#include "cli/sim_report.h"
#include "timeline/html.h"
#include "trace/format.h"
#include "trace/pickle_reader.h"
#include "trace/units.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

namespace
{

using namespace xmem;
using namespace xmem::cli;

constexpr int k_exit_ok = 0, k_exit_input = 2, k_exit_diverged = 3;
constexpr const char *k_default_torch = "2.6";

int fail(const std::string &message)
{
    std::fprintf(stderr, "%s\n", message.c_str());
    return k_exit_input;
}

struct OpenTrace {
    std::FILE *file = nullptr;
    bool owned = false;
    trace::TraceFormat format = trace::TraceFormat::unknown;
    ~OpenTrace()
    {
        if (owned && file)
            std::fclose(file);
    }
};

// --from-pickle: the pickle becomes JSON in a temporary file, read like any JSON snapshot.
Result<bool> convert_pickle(const std::string &path, OpenTrace &out)
{
    if (out.format != trace::TraceFormat::snapshot_pickle)
        return Result<bool>::fail("xmem: " + path +
                                  ": --from-pickle needs a pickled snapshot (binary pickle, "
                                  "protocol 2 or later)");
    auto json = trace::pickle_snapshot_to_json(out.file, path);
    if (!json.ok())
        return Result<bool>::fail(json.error());
    std::FILE *converted = std::tmpfile();
    if (!converted ||
        std::fwrite(json.value().data(), 1, json.value().size(), converted) != json.value().size())
        return Result<bool>::fail("xmem: " + path +
                                  ": cannot write the converted snapshot: " + std::strerror(errno));
    std::rewind(converted);
    if (out.owned)
        std::fclose(out.file);
    out.file = converted;
    out.owned = true;
    out.format = trace::TraceFormat::snapshot_json;
    return Result<bool>::ok(true);
}

Result<bool> open_trace(const std::string &path, bool from_pickle, OpenTrace &out)
{
    out.owned = path != "-";
    out.file = out.owned ? std::fopen(path.c_str(), "rb") : stdin;
    if (!out.file)
        return Result<bool>::fail("xmem: " + path + ": cannot open trace: " + std::strerror(errno));
    out.format = trace::detect_format(out.file);
    if (from_pickle)
        return convert_pickle(path, out);
    switch (out.format) {
    case trace::TraceFormat::compact:
    case trace::TraceFormat::snapshot_json:
        return Result<bool>::ok(true);
    case trace::TraceFormat::empty:
        return Result<bool>::fail("xmem: " + path + ": the trace is empty");
    case trace::TraceFormat::snapshot_pickle:
        return Result<bool>::fail(
            "xmem: " + path +
            ": a pickled snapshot; export it to JSON first, or read it with: xmem sim "
            "--from-pickle " +
            path);
    default:
        return Result<bool>::fail("xmem: " + path +
                                  ": unknown trace format (expected '#xmem-trace 1' or a PyTorch "
                                  "memory snapshot in JSON)");
    }
}

// --torch wins, then the trace's own `M torch` (a release newer than every one simulated
// gets the newest's rules, and the source says so), then the default release.
Result<sim::TorchVersion> choose_torch(const SimOptions &o, const std::string *from_trace,
                                       RunInfo &run)
{
    if (!o.torch && from_trace) {
        auto job = sim::rules_for_job_torch(*from_trace);
        if (!job.ok())
            return Result<sim::TorchVersion>::fail(job.error().message +
                                                   " (override with --torch)");
        run.torch_source = job.value().newer_than_known
                               ? "trace metadata " + *from_trace + ", newer than any simulated"
                               : "trace metadata";
        run.torch = job.value().rules.str();
        return Result<sim::TorchVersion>::ok(job.value().rules);
    }
    std::string text = o.torch ? *o.torch : k_default_torch;
    run.torch_source = o.torch ? "--torch" : "default";
    auto version = sim::TorchVersion::parse(text);
    if (!version.ok())
        return Result<sim::TorchVersion>::fail(version.error().message);
    run.torch = version.value().str();
    return version;
}

Result<std::unique_ptr<sim::DeviceCachingAllocator>> make_allocator(const SimOptions &o,
                                                                    sim::TorchVersion v)
{
    using R = Result<std::unique_ptr<sim::DeviceCachingAllocator>>;
    auto config = sim::AllocatorConfig::parse(o.alloc_conf, v);
    if (!config.ok())
        return R::fail(config.error());
    if (o.capacity)
        config.value().device_total_bytes = *o.capacity;
    auto valid = config.value().validate();
    if (!valid.ok())
        return R::fail(valid.error());
    return R::ok(std::make_unique<sim::DeviceCachingAllocator>(config.value()));
}

int run_compact(const SimOptions &o, OpenTrace &input, RunInfo &run, timeline::TimelineRecorder *tl,
                ReplayReport &report, std::unique_ptr<sim::DeviceCachingAllocator> &allocator)
{
    auto reader = trace::CompactTraceReader::open(input.file, o.trace == "-" ? "<stdin>" : o.trace);
    if (!reader.ok())
        return fail(reader.error().message);
    auto torch = choose_torch(o, reader.value().metadata_value("torch"), run);
    if (!torch.ok())
        return fail(torch.error().message);
    auto made = make_allocator(o, torch.value());
    if (!made.ok())
        return fail(made.error().message);
    allocator = std::move(made.value());
    auto replayed = replay_compact(reader.value(), *allocator, tl);
    if (!replayed.ok())
        return fail(replayed.error().message);
    report = std::move(replayed.value());
    return k_exit_ok;
}

int run_snapshot(const SimOptions &o, OpenTrace &input, RunInfo &run,
                 timeline::TimelineRecorder *tl, ReplayReport &report,
                 std::unique_ptr<sim::DeviceCachingAllocator> &allocator)
{
    auto torch = choose_torch(o, nullptr, run);
    if (!torch.ok())
        return fail(torch.error().message);
    auto made = make_allocator(o, torch.value());
    if (!made.ok())
        return fail(made.error().message);
    allocator = std::move(made.value());
    SnapshotReplayOptions options{o.device, o.verify};
    auto replayed =
        replay_snapshot(input.file, o.trace == "-" ? "<stdin>" : o.trace, options, *allocator, tl);
    if (!replayed.ok())
        return fail(replayed.error().message);
    report = std::move(replayed.value());
    return k_exit_ok;
}

int sim_main(int argc, char **argv)
{
    auto parsed = parse_sim_options(std::vector<std::string>(argv + 1, argv + argc));
    if (!parsed.ok())
        return fail(parsed.error().message);
    const SimOptions &o = parsed.value();
    if (o.help) {
        std::fputs(sim_usage(), stdout);
        return k_exit_ok;
    }
    OpenTrace input;
    auto opened = open_trace(o.trace, o.from_pickle, input);
    if (!opened.ok())
        return fail(opened.error().message);
    if (o.verify && input.format != trace::TraceFormat::snapshot_json)
        return fail("xmem: sim: --verify needs a PyTorch snapshot (a compact trace has no real "
                    "segment events to compare with)");

    RunInfo run{o.trace, "", "", o.alloc_conf, o.capacity, o.timeline, 0};
    std::unique_ptr<timeline::TimelineRecorder> tl;
    if (o.timeline)
        tl = std::make_unique<timeline::TimelineRecorder>();
    ReplayReport report;
    std::unique_ptr<sim::DeviceCachingAllocator> allocator;
    auto start = std::chrono::steady_clock::now();
    int rc = input.format == trace::TraceFormat::compact
                 ? run_compact(o, input, run, tl.get(), report, allocator)
                 : run_snapshot(o, input, run, tl.get(), report, allocator);
    if (rc != k_exit_ok)
        return rc;
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    if (tl) {
        std::string subtitle =
            "torch " + run.torch + ", capacity " +
            (o.capacity ? trace::format_bytes(*o.capacity) : std::string("unlimited")) +
            (o.alloc_conf.empty() ? "" : ", PYTORCH_CUDA_ALLOC_CONF=" + o.alloc_conf);
        auto written =
            timeline::write_timeline_html(*tl, {"xmem sim: " + o.trace, subtitle}, *o.timeline);
        if (!written.ok())
            return fail(written.error().message);
    }
    if (o.json)
        std::fputs(sim_report_json(run, report, allocator->stats()).c_str(), stdout);
    else
        print_sim_summary(stdout, run, report, allocator->stats());
    return report.verify.diverged ? k_exit_diverged : k_exit_ok;
}

} // namespace

// Every expected failure is a Result that sim_main turns into a one-line message and an exit
// status; nothing is caught here, since the only throw left in the simulator (the allocator
// handed a config that skipped validate()) is a programming error.
int main(int argc, char **argv)
{
    return sim_main(argc, argv);
}
