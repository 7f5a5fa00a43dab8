#include "estimate_options.h"

#include "allocator/version.h"
#include "trace/units.h"
#include "what_if.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace xmem::estimate
{

const char *const k_exact_refuses =
    "the exact capture runs one process on the CPU, without the other ranks its collectives "
    "wait for; use --mode fast (or auto), which runs each rank with a fake process group";

namespace
{

enum class Arg { none, text, count, fraction, size };

struct OptionSpec {
    const char *name;
    Arg arg;
};

const OptionSpec k_options[] = {
    {"--gpu", Arg::text},
    {"--torch", Arg::text},
    {"--alloc-conf", Arg::text},
    {"--steps", Arg::count},
    {"--iterations", Arg::count},
    {"--json", Arg::none},
    {"--timeline", Arg::text},
    {"--trace-in", Arg::text},
    {"--keep-trace", Arg::text},
    {"--catalog", Arg::text},
    {"--threads", Arg::count},
    {"--timeout", Arg::count},
    {"--budget", Arg::count},
    {"--max-rss", Arg::count},
    {"--margin", Arg::fraction},
    {"--mode", Arg::text},
    {"--help", Arg::none},
    {"-h", Arg::none},
    {"--analysed-trace", Arg::text},
    {"--sweep", Arg::text},
    {"--fit", Arg::size},
    {"--sweep-jobs", Arg::count},
    {"--what-if", Arg::text},
    {"--exact-launcher", Arg::text},
    {"--fast-launcher", Arg::text},
    {"--world-size", Arg::count},
};

const OptionSpec *find_option(const std::string &name)
{
    for (const OptionSpec &o : k_options)
        if (name == o.name)
            return &o;
    return nullptr;
}

Result<unsigned> parse_count(const std::string &opt, const std::string &v)
{
    errno = 0;
    char *end = nullptr;
    unsigned long n = std::strtoul(v.c_str(), &end, 10);
    if (v.empty() || *end || errno || n == 0 || n > 100000 || v[0] == '-')
        return Result<unsigned>::fail("xmem: " + opt + ": expected a whole number >= 1, got '" + v +
                                      "'");
    return Result<unsigned>::ok(static_cast<unsigned>(n));
}

Result<double> parse_fraction(const std::string &opt, const std::string &v)
{
    char *end = nullptr;
    double f = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || !(f >= 0.0 && f <= 1.0))
        return Result<double>::fail(
            "xmem: " + opt + ": expected a fraction in [0, 1] such as 0.05, got '" + v + "'");
    return Result<double>::ok(f);
}

// A launcher's words, separated by spaces (xmemd's srun line: no word has one).
std::vector<std::string> words(const std::string &v)
{
    std::vector<std::string> out;
    size_t at = 0;
    while ((at = v.find_first_not_of(' ', at)) != std::string::npos) {
        size_t end = v.find(' ', at);
        out.push_back(v.substr(at, end == std::string::npos ? end : end - at));
        at = end;
    }
    return out;
}

// --torch: MAJOR.MINOR[.PATCH] of a release the simulator knows (allocator/version.h).
Result<void> check_torch(const std::string &v)
{
    std::string known = sim::known_releases_text();
    auto parsed = sim::TorchVersion::parse(v);
    if (!parsed.ok())
        return Result<void>::fail(parsed.error().message + " (--torch; known: " + known + ")");
    if (sim::is_known_release(parsed.value()))
        return Result<void>::success();
    return Result<void>::fail("xmem: --torch " + v + ": unknown PyTorch release (known: " + known +
                              ")");
}

Result<void> apply(EstimateOptions &o, const std::string &name, const std::string &v)
{
    if (name == "--gpu")
        o.gpu = v;
    else if (name == "--torch") {
        if (auto k = check_torch(v); !k.ok())
            return k;
        o.torch = v;
    } else if (name == "--alloc-conf")
        o.alloc_conf = v;
    else if (name == "--timeline")
        o.timeline_out = v;
    else if (name == "--trace-in")
        o.trace_in = v;
    else if (name == "--keep-trace")
        o.keep_trace = v;
    else if (name == "--analysed-trace")
        o.analysed_trace = v;
    else if (name == "--catalog")
        o.catalog = v;
    else if (name == "--json")
        o.json = true;
    else if (name == "--mode") {
        if (v != "fast" && v != "exact" && v != "auto")
            return Result<void>::fail("xmem: --mode: expected fast, exact or auto, got '" + v +
                                      "'");
        o.mode = v;
    } else if (name == "--help" || name == "-h")
        o.help = true;
    else if (name == "--sweep")
        o.sweep = v;
    else if (name == "--exact-launcher" || name == "--fast-launcher") {
        std::vector<std::string> w = words(v);
        if (w.empty() || w[0].empty() || w[0][0] != '/')
            return Result<void>::fail(
                "xmem: " + name +
                ": expected a command starting with an "
                "absolute path, such as '/usr/bin/srun --partition=cpu --', got '" +
                v + "'");
        (name == "--exact-launcher" ? o.exact_launcher : o.fast_launcher) = w;
    } else if (name == "--what-if") {
        if (auto ok = check_what_if(v); !ok.ok())
            return ok;
        o.what_if.push_back(v);
    } else if (name == "--fit") {
        if (!trace::parse_byte_size(v, o.fit_bytes) || o.fit_bytes == 0)
            return Result<void>::fail("xmem: --fit: expected a size such as 20G or 20GiB, got '" +
                                      v + "'");
    } else if (name == "--margin") {
        auto f = parse_fraction(name, v);
        if (!f.ok())
            return Result<void>::fail(f.error());
        o.margin = f.value();
    } else {
        auto n = parse_count(name, v);
        if (!n.ok())
            return Result<void>::fail(n.error());
        if (name == "--steps")
            o.steps = n.value();
        else if (name == "--iterations") { // the older name, still passed by scripts
            o.steps = n.value();
            if (o.warnings.empty())
                o.warnings.push_back("xmem: --iterations is now --steps");
        } else if (name == "--threads")
            o.threads = n.value();
        else if (name == "--budget")
            o.budget_seconds = n.value();
        else if (name == "--max-rss")
            o.max_rss_mib = n.value();
        else if (name == "--sweep-jobs")
            o.sweep_jobs = n.value();
        else if (name == "--world-size")
            o.world_size = n.value();
        else
            o.timeout_seconds = n.value();
    }
    return Result<void>::success();
}

// --world-size N > 1 profiles each rank role in fast mode; what cannot go with it is refused
// here, before anything runs (docs/estimate.md, "Ranks").
Result<void> check_world_size(const EstimateOptions &o)
{
    if (o.world_size <= 1)
        return Result<void>::success();
    std::string n = "xmem: --world-size " + std::to_string(o.world_size) + ": ";
    if (!o.trace_in.empty())
        return Result<void>::fail(n + "a trace (--trace-in) is one rank's; give the command");
    if (o.mode == "exact")
        return Result<void>::fail(n + k_exact_refuses);
    if (!o.sweep.empty() || !o.what_if.empty() || !o.timeline_out.empty() ||
        !o.analysed_trace.empty())
        return Result<void>::fail(n + "--sweep, --what-if, --timeline and --analysed-trace "
                                      "are for one process; estimate at --world-size 1 for them");
    return Result<void>::success();
}

} // namespace

const char *usage_text()
{
    return "usage: xmem estimate [--gpu NAME] [--torch VERSION] [--alloc-conf STRING]\n"
           "                     [--steps N] [--json] [--timeline OUT.html]\n"
           "                     [--trace-in TRACE | -- COMMAND ARGS...]\n"
           "                     [--catalog gpus.yaml] [--keep-trace PATH] [--threads N]\n"
           "                     [--timeout SECONDS] [--budget SECONDS] [--margin FRACTION]\n"
           "                     [--mode fast|exact|auto] [--max-rss MIB]\n"
           "                     [--analysed-trace PATH]\n"
           "                     [--exact-launcher COMMAND] [--fast-launcher COMMAND]\n"
           "                     [--world-size N]\n"
           "                     [--sweep ARG=V1,V2,...|ARG=LO..HI [--fit SIZE] [--sweep-jobs N]]\n"
           "                     [--what-if alloc-conf=SETTINGS|amp=bf16|checkpoint=all-blocks|\n"
           "                                optimizer=fused ...]\n"
           "Runs COMMAND (a PyTorch training entrypoint) for N optimizer steps on the CPU,\n"
           "then predicts its peak GPU memory on NAME and recommends a hard memory limit.\n"
           "--torch picks the PyTorch release whose allocator is simulated (default: the\n"
           "job's own, which the trace records). --trace-in analyses an existing trace.\n"
           "--mode fast runs the job on fake tensors (no compute, no memory), exact runs it for\n"
           "real on the CPU, auto (default) tries fast and falls back to exact.\n"
           "--timeout bounds the wait for each optimizer step after the first (or 3 x the\n"
           "first step's time when that is more), --budget the\n"
           "whole profile, set-up before the first step included (xmem-profile's defaults).\n"
           "--max-rss bounds the exact capture's memory (default: 80 % of what is free).\n"
           "--analysed-trace writes the trace the simulator replays, after the analysis\n"
           "(GPU-only allocations such as cuBLAS workspaces inserted).\n"
           "--exact-launcher and --fast-launcher run that capture under COMMAND (words\n"
           "separated by spaces), such as xmemd's srun for a profile job; the trace then goes\n"
           "in the working directory, which the node running it shares.\n"
           "--sweep estimates once per value of one of COMMAND's own arguments (e.g.\n"
           "--sweep --batch-size=8,16,32, or =1..512 to search) and names the largest value\n"
           "that fits the GPU, or whose limit fits --fit SIZE (a share such as 20G).\n"
           "--what-if prints, beside the estimate, the job's estimate with one change:\n"
           "alloc-conf=expandable_segments:True replays the same trace under other allocator\n"
           "settings; amp=bf16 (the training forward under bf16 autocast),\n"
           "checkpoint=all-blocks (Hugging Face models' gradient checkpointing) and\n"
           "optimizer=fused (fused=True for Adam, AdamW, SGD) profile the job again with the\n"
           "change applied, as if the script were edited; a change that cannot be applied\n"
           "faithfully to the job is refused with one line.\n"
           "--world-size N profiles the job as the ranks of N processes, one per GPU, in\n"
           "fast mode (default: the count of a torchrun, accelerate launch or deepspeed\n"
           "launch in COMMAND, else 1); the estimate is the highest rank's, and the JSON\n"
           "lists every rank.\n";
}

Result<EstimateOptions> parse_options(int argc, char **argv)
{
    using R = Result<EstimateOptions>;
    EstimateOptions o;
    int i = 1;
    for (; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        std::string name = a, value;
        bool inline_value = false;
        if (size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
            name = a.substr(0, eq);
            value = a.substr(eq + 1);
            inline_value = true;
        }
        const OptionSpec *spec = find_option(name);
        if (!spec)
            return R::fail("xmem: " + a +
                           ": unknown option (see xmem estimate --help); put the "
                           "training command after --");
        if (spec->arg != Arg::none && !inline_value) {
            if (i + 1 >= argc)
                return R::fail("xmem: " + name + ": needs a value");
            value = argv[++i];
        }
        auto r = apply(o, name, value);
        if (!r.ok())
            return R::fail(r.error());
    }
    for (; i < argc; ++i)
        o.command.emplace_back(argv[i]);
    if (o.help)
        return R::ok(std::move(o));
    if (o.trace_in.empty() && o.command.empty())
        return R::fail("xmem: estimate: no training command; give it after -- (e.g. xmem estimate "
                       "-- python3 train.py) or pass --trace-in TRACE");
    if (!o.trace_in.empty() && !o.command.empty())
        return R::fail("xmem: --trace-in: a trace and a command were both given; pick one");
    if (o.sweep.empty() && o.fit_bytes)
        return R::fail("xmem: --fit: sizes a sweep's values; give --sweep ARG=VALUES with it");
    if (!o.sweep.empty() && !o.trace_in.empty())
        return R::fail("xmem: --sweep: reruns the command for each value; a trace (--trace-in) "
                       "has none to rerun");
    for (const std::string &change : o.what_if)
        if (!o.trace_in.empty() && applied_in_capture(change))
            return R::fail("xmem: --what-if " + change +
                           ": profiles the job again with the change applied; a trace "
                           "(--trace-in) has no command to run");
    if (!o.sweep.empty() && !o.what_if.empty())
        return R::fail("xmem: --what-if: with --sweep, every value would print it; estimate "
                       "the value you want alone with --what-if");
    if (!o.sweep.empty() &&
        (!o.timeline_out.empty() || !o.keep_trace.empty() || !o.analysed_trace.empty()))
        return R::fail("xmem: --sweep: --timeline, --keep-trace and --analysed-trace would be "
                       "written once per value; estimate the value you want alone for them");
    if (auto ranked = check_world_size(o); !ranked.ok())
        return R::fail(ranked.error());
    return R::ok(std::move(o));
}

} // namespace xmem::estimate
