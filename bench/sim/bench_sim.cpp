// xmem-bench-sim: replays a synthetic training-like trace of 1, 10 and 30 million events
// through the allocator simulator and prints events per second and peak RSS side by side.
// Each run happens in a forked child so its peak RSS is its own (wait4's ru_maxrss):
// equal RSS across lengths shows that memory follows live blocks, not trace length.
//
// Usage: xmem-bench-sim [MILLIONS_OF_EVENTS...]   (default: 1 10 30)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "allocator/allocator.h"
#include "training_trace.h"

namespace
{

using xmem::sim::AllocatorConfig;
using xmem::sim::DeviceCachingAllocator;
using xmem::sim::TorchVersion;

struct RunSpec {
    const char *label;
    const char *torch;
    const char *alloc_conf;
    uint64_t events;
};

struct RunResult {
    uint64_t events;
    uint64_t iterations;
    uint64_t ooms;
    double cpu_seconds;
    double wall_seconds;
    int64_t peak_reserved;
    int64_t peak_allocated;
    int64_t final_allocated;
    long vm_hwm_kib;  // the child's own VmHWM from /proc/self/status
    long max_rss_kib; // wait4's ru_maxrss, filled in by the parent
};

// Peak resident set of this process (VmHWM), in KiB; 0 if /proc is unavailable.
long vm_hwm_kib()
{
    FILE *f = std::fopen("/proc/self/status", "r");
    if (f == nullptr)
        return 0;
    char line[256];
    long kib = 0;
    while (std::fgets(line, sizeof line, f) != nullptr)
        if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    std::fclose(f);
    return kib;
}

double cpu_now()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

RunResult run_in_this_process(const RunSpec &spec)
{
    auto version = TorchVersion::parse(spec.torch);
    auto cfg = AllocatorConfig::parse(spec.alloc_conf, version.value());
    if (!cfg) {
        std::fprintf(stderr, "%s\n", cfg.error().message.c_str());
        std::exit(2);
    }
    DeviceCachingAllocator alloc(cfg.value());
    const xmem::bench::TrainingTrace trace(xmem::bench::TraceShape{});
    const auto wall0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_now();
    const xmem::bench::ReplayCounts counts = trace.replay(alloc, spec.events);
    RunResult r{};
    r.cpu_seconds = cpu_now() - cpu0;
    r.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    r.events = counts.events;
    r.iterations = counts.iterations;
    r.ooms = counts.ooms;
    r.peak_reserved = alloc.stats().reserved_bytes[0].peak;
    r.peak_allocated = alloc.stats().allocated_bytes[0].peak;
    r.final_allocated = alloc.stats().allocated_bytes[0].current;
    r.vm_hwm_kib = vm_hwm_kib();
    return r;
}

// Forks, runs the spec in the child, returns its result with the child's peak RSS.
bool run_in_child(const RunSpec &spec, RunResult *out)
{
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    const pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        close(fds[0]);
        const RunResult r = run_in_this_process(spec);
        const ssize_t n = write(fds[1], &r, sizeof r);
        _exit(n == static_cast<ssize_t>(sizeof r) ? 0 : 1);
    }
    close(fds[1]);
    const ssize_t n = read(fds[0], out, sizeof *out);
    close(fds[0]);
    int status = 0;
    rusage usage{};
    if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return false;
    out->max_rss_kib = usage.ru_maxrss;
    return n == static_cast<ssize_t>(sizeof *out);
}

void print_header()
{
    std::printf("%-22s %12s %9s %9s %14s %12s %12s %14s %14s\n", "run", "events", "iters", "cpu s",
                "events/cpu-s", "ru_maxrss", "VmHWM", "peak reserved", "peak alloc");
}

void print_row(const RunSpec &spec, const RunResult &r)
{
    char label[64];
    std::snprintf(label, sizeof label, "%s %.0fM", spec.label,
                  static_cast<double>(spec.events) / 1e6);
    std::printf("%-22s %12llu %9llu %9.2f %13.2fM %8.1f MiB %8.1f MiB %10.1f MiB %10.1f MiB\n",
                label, static_cast<unsigned long long>(r.events),
                static_cast<unsigned long long>(r.iterations), r.cpu_seconds,
                static_cast<double>(r.events) / r.cpu_seconds / 1e6, r.max_rss_kib / 1024.0,
                r.vm_hwm_kib / 1024.0, static_cast<double>(r.peak_reserved) / 1048576.0,
                static_cast<double>(r.peak_allocated) / 1048576.0);
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<uint64_t> millions;
    for (int i = 1; i < argc; ++i) {
        char *end = nullptr;
        const unsigned long long m = std::strtoull(argv[i], &end, 10);
        if (end == argv[i] || *end != '\0' || m == 0) {
            std::fprintf(
                stderr, "xmem-bench-sim: '%s': expected a number of millions of events (e.g. 10)\n",
                argv[i]);
            return 2;
        }
        millions.push_back(m);
    }
    if (millions.empty())
        millions = {1, 10, 30};

    std::vector<RunSpec> specs;
    for (uint64_t m : millions)
        specs.push_back({"torch 2.6", "2.6", "", m * 1000000});
    const uint64_t mid = millions[millions.size() / 2] * 1000000;
    specs.push_back({"torch 1.13", "1.13", "", mid});
    specs.push_back(
        {"2.6 max_split 256", "2.6", "max_split_size_mb:256,roundup_power2_divisions:4", mid});
    specs.push_back({"2.6 expandable", "2.6", "expandable_segments:True", mid});

    std::printf(
        "xmem-bench-sim: synthetic training trace (48 layers, 3 streams), one process per run\n");
    print_header();
    std::vector<RunResult> results;
    for (const RunSpec &spec : specs) {
        RunResult r{};
        if (!run_in_child(spec, &r)) {
            std::fprintf(stderr, "xmem-bench-sim: run '%s' failed\n", spec.label);
            return 1;
        }
        if (r.final_allocated != 0 || r.ooms != 0) {
            std::fprintf(stderr,
                         "xmem-bench-sim: run '%s' ended with %lld B allocated and %llu OOMs\n",
                         spec.label, static_cast<long long>(r.final_allocated),
                         static_cast<unsigned long long>(r.ooms));
            return 1;
        }
        print_row(spec, r);
        results.push_back(r);
    }
    const RunResult &first = results.front();
    const RunResult &last = results[millions.size() - 1];
    std::printf("peak RSS (VmHWM) %lluM vs %lluM events: %.1f MiB vs %.1f MiB (ratio %.2f for "
                "%.0fx the events)\n",
                static_cast<unsigned long long>(millions.front()),
                static_cast<unsigned long long>(millions.back()), first.vm_hwm_kib / 1024.0,
                last.vm_hwm_kib / 1024.0,
                static_cast<double>(last.vm_hwm_kib) / static_cast<double>(first.vm_hwm_kib),
                static_cast<double>(last.events) / static_cast<double>(first.events));
    return 0;
}
