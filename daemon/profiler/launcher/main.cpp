// xmem-profile: capture the tensor allocations of a PyTorch training command on the CPU.
// See docs/capture.md. Exit status: daemon/contract/profile_status.h (docs/profile-status.md).
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
#include "locate.h"
#include "memory.h"
#include "profile_options.h"

using namespace xmem::profile;

namespace
{

constexpr int k_exit_failed = XMEM_PROFILE_EXIT_FAILED;
constexpr int k_exit_usage = XMEM_PROFILE_EXIT_USAGE;
constexpr int k_exit_environment = XMEM_PROFILE_EXIT_ENVIRONMENT;
constexpr int k_exit_memory = XMEM_PROFILE_EXIT_MEMORY;
constexpr int k_stderr_tail_lines = 20;

std::string absolute(const std::string &path)
{
    if (!path.empty() && path[0] == '/')
        return path;
    char cwd[PATH_MAX];
    return getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + path : path;
}

std::string chained_pythonpath(const std::string &shim_dir)
{
    const char *existing = std::getenv("PYTHONPATH");
    return existing && *existing ? shim_dir + ":" + existing : shim_dir;
}

uint64_t rss_limit(const Options &opts)
{
    if (opts.max_rss_mib == k_rss_default)
        return default_rss_limit();
    return static_cast<uint64_t>(opts.max_rss_mib) << 20;
}

// "812 MiB" below a GiB, "10.3 GiB" above.
std::string size_text(uint64_t bytes)
{
    char text[32];
    if (bytes < (1ull << 30))
        std::snprintf(text, sizeof text, "%llu MiB", static_cast<unsigned long long>(bytes >> 20));
    else
        std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
    return text;
}

// glibc's malloc settings for the job, unless the caller chose its own (docs/capture.md,
// "Memory"). By default glibc raises its mmap threshold to the size of each large block
// freed, up to 32 MiB, so that a capture's tensors, below that, come from the heap, whose
// freed middle is never returned: the job's RSS grows to several times its live tensors. A
// fixed threshold keeps every block of a MiB or more in its own mapping, unmapped when freed,
// and a fixed trim threshold returns the heap's free top past a MiB.
void add_allocator_settings(std::vector<std::pair<std::string, std::string>> &env)
{
    constexpr const char *k_mib = "1048576";
    for (const char *name : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"})
        if (!std::getenv(name))
            env.emplace_back(name, k_mib);
}

ChildSpec make_child_spec(const Options &opts, const ShimPaths &paths, const Command &cmd)
{
    ChildSpec spec;
    spec.argv = cmd.argv;
    spec.timeout_s = opts.timeout_s;
    spec.budget_s = budget_for(opts);
    spec.verbose = opts.verbose;
    spec.progress = opts.verbose || isatty(STDERR_FILENO);
    spec.name = cmd.name;
    spec.steps = opts.steps;
    spec.max_rss = rss_limit(opts);
    std::string threads = std::to_string(opts.threads > 0 ? opts.threads : available_cpus());
    spec.env = {
        {"PYTHONPATH", chained_pythonpath(paths.python_dir)},
        {"XMEM_CAPTURE_LIB", paths.capture_lib},
        {"XMEM_CAPTURE_LIB_TORCH", paths.capture_lib_torch},
        {"XMEM_CAPTURE_SRC", paths.capture_src},
        {"XMEM_CAPTURE_INCLUDE", paths.capture_include},
        {"XMEM_TRACE_OUT", absolute(opts.out)},
        {"XMEM_STEPS", std::to_string(opts.steps)},
        {"XMEM_THREADS", threads},
        {"XMEM_TIMEOUT", std::to_string(opts.timeout_s)},
        // OpenMP pools are sized before the script can call torch.set_num_threads.
        {"OMP_NUM_THREADS", threads},
        {"MKL_NUM_THREADS", threads},
    };
    // Always set, empty for none: a value left in the caller's environment changes nothing.
    spec.env.emplace_back("XMEM_WHAT_IF", opts.what_if); // read by xmem_capture/what_if.py
    add_allocator_settings(spec.env);
    return spec;
}

void print_stderr_tail(const ChildResult &r)
{
    if (r.stderr_tail.empty())
        return;
    std::fprintf(stderr, "xmem: last lines of its stderr:\n%s",
                 tail_lines(r.stderr_tail, k_stderr_tail_lines, "  | ").c_str());
}

// A child killed on timeout (or by a signal) cannot remove its partial files.
void remove_leftovers(const std::string &out)
{
    unlink((out + ".spool").c_str());
    unlink((out + ".tmp").c_str());
}

// Says which clock ran out and what each likely cause needs; the script's stderr tail shows
// where it was (an evaluation pass, a data warm-up, a loop that never steps).
void report_timeout(const Options &opts, const char *name, const ChildResult &r)
{
    if (r.building)
        std::fprintf(stderr,
                     "xmem: %s: building the capture library for the job's torch took over %d s "
                     "(is the machine overloaded? try again, or run once with -v)\n",
                     name, k_build_limit_s);
    else if (r.steps == 0)
        std::fprintf(stderr,
                     "xmem: %s: no optimizer step within the profile's budget of %d s (if it sets "
                     "up, evaluates or loads data for long before training, raise --budget; if "
                     "it updates parameters without torch.optim several times a step, mark each "
                     "step with torch.cuda.nvtx.mark(\"xmem.step\"): docs/capture.md)\n",
                     name, budget_for(opts));
    else if (r.budget_spent)
        std::fprintf(stderr,
                     "xmem: %s: the profile's budget of %d s ran out after %d of %d optimizer "
                     "steps (raise --budget, or profile fewer --steps)\n",
                     name, budget_for(opts), r.steps, opts.steps);
    else
        std::fprintf(stderr,
                     "xmem: %s: no optimizer step within %d s after step %d (raise --timeout)\n",
                     name, r.step_timeout_s, r.steps);
    print_stderr_tail(r);
}

// The steps the trace at PATH records (its `M steps N`, docs/trace-format.md), 0 without a
// trace written by this run (SINCE, the job's start) or without the line. They count as the
// status pipe's do: a wrapper between the launcher and Python (a runner that closes
// inherited descriptors) can leave the capture without the pipe, and a backward-only
// script's one step is told only as it exits.
int trace_steps(const std::string &path, time_t since)
{
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || st.st_mtime < since)
        return 0;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line) && (line.empty() || line[0] == '#' || line[0] == 'M'))
        if (line.rfind("M steps ", 0) == 0)
            return std::atoi(line.c_str() + 8);
    return 0;
}

// One line saying what happened (and, for a failing script, what it printed last).
int report(const Options &opts, const Command &cmd, const ChildResult &r, uint64_t max_rss,
           time_t started)
{
    const char *name = cmd.name.c_str();
    switch (r.outcome) {
    case ChildEnd::done:
        std::fprintf(stderr, "xmem: %s: captured %d optimizer steps in %.1f s into %s\n", name,
                     r.steps, r.seconds, opts.out.c_str());
        return 0;
    case ChildEnd::exited:
        if (int steps = trace_steps(opts.out, started); steps > 0) {
            std::fprintf(
                stderr,
                "xmem: %s: the script ended after %d of %d optimizer steps; trace %s has %d\n",
                name, steps, opts.steps, opts.out.c_str(), steps);
            return 0;
        }
        std::fprintf(
            stderr,
            "xmem: %s: exited without an optimizer step (does the script call optimizer.step()?)\n",
            name);
        return k_exit_failed;
    case ChildEnd::shim_failed:
        std::fprintf(stderr, "%s\n", r.message.c_str());
        return r.give_up_exit; // the shim's typed line says which: fail, environment, unsupported
    case ChildEnd::failed:
        if (r.signal)
            std::fprintf(stderr, "xmem: %s: killed by signal %d after %d optimizer steps\n", name,
                         r.signal, r.steps);
        else
            std::fprintf(stderr,
                         "xmem: %s: exited with status %d after %d optimizer steps (fix the "
                         "script; no trace written)\n",
                         name, r.exit_code, r.steps);
        print_stderr_tail(r);
        // The capture said the job met a limit its caller set: the caller reads which here.
        return r.limit_exit ? r.limit_exit : k_exit_failed;
    case ChildEnd::timed_out:
        report_timeout(opts, name, r);
        return k_exit_failed;
    case ChildEnd::out_of_memory:
        // Fewer steps or a smaller batch is no fix: the job's own batch is what is sized.
        std::fprintf(stderr,
                     "xmem: %s: the exact capture reached %s of memory (RSS), over its limit of "
                     "%s, after %d of %d optimizer steps; stopped (it holds every tensor of the "
                     "job on the CPU: use fast mode, `xmem estimate --mode fast`, which holds "
                     "none; or raise --max-rss on a machine with more memory)\n",
                     name, size_text(r.peak_rss).c_str(), size_text(max_rss).c_str(), r.steps,
                     opts.steps);
        return k_exit_memory;
    case ChildEnd::interrupted:
        std::fprintf(stderr, "xmem: %s: interrupted; no trace written\n", name);
        return k_exit_failed;
    case ChildEnd::not_started:
        std::fprintf(stderr, "%s\n", r.message.c_str());
        return r.limit_exit ? r.limit_exit : k_exit_failed; // fork: EAGAIN
    }
    return k_exit_failed;
}

} // namespace

int main(int argc, char **argv)
{
    Options opts;
    ParseResult parsed = parse_options(argc, argv, &opts);
    if (parsed.status == ParseStatus::help) {
        std::fputs(usage_text(), stdout);
        return 0;
    }
    if (parsed.status == ParseStatus::version) {
        std::printf("xmem-profile %s\n", XMEM_VERSION);
        return 0;
    }
    if (parsed.status == ParseStatus::error) {
        std::fprintf(stderr, "%s\n", parsed.error.c_str());
        return k_exit_usage;
    }

    xmem::Result<ShimPaths> located = locate_shim();
    if (!located.ok()) {
        std::fprintf(stderr, "%s\n", located.error().message.c_str());
        return k_exit_failed;
    }
    const ShimPaths &paths = located.value();
    // No PATH at all: the search path execvp would fall back to.
    const char *path_env = std::getenv("PATH");
    auto cmd = resolve_command(opts.command, python_override(opts.python),
                               path_env ? path_env : "/usr/local/bin:/usr/bin:/bin");
    if (!cmd.ok()) {
        std::fprintf(stderr, "%s\n", cmd.error().message.c_str());
        return k_exit_environment;
    }
    ChildSpec spec = make_child_spec(opts, paths, cmd.value());
    time_t started = time(nullptr);
    ChildResult result = run_child(spec);
    int status = report(opts, cmd.value(), result, spec.max_rss, started);
    remove_leftovers(absolute(opts.out));
    return status;
}
