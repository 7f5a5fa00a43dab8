// xmem-trace-bench: throughput of the compact reader alone and of reader + allocator replay
// on one trace (`xmem trace-bench TRACE [--torch V]`). Why a separate tool: the project
// targets >= 10 M events/s replay, and the reader must be measured on its own to show it is
// not the bottleneck.
#include "cli/replay.h"
#include "trace/compact_reader.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <sys/stat.h>

namespace
{

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU seconds of this process: on a shared login node wall time mostly measures the
// neighbours, so both are printed.
double cpu_seconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int read_only(const std::string &path, uint64_t file_bytes)
{
    auto start = Clock::now();
    double cpu_start = cpu_seconds();
    auto reader = xmem::trace::CompactTraceReader::open(path);
    if (!reader.ok()) {
        std::fprintf(stderr, "%s\n", reader.error().message.c_str());
        return 2;
    }
    xmem::trace::TraceEvent ev;
    uint64_t events = 0, checksum = 0;
    for (;;) {
        auto more = reader.value().next(ev);
        if (!more.ok()) {
            std::fprintf(stderr, "%s\n", more.error().message.c_str());
            return 2;
        }
        if (!more.value())
            break;
        ++events;
        checksum += ev.bytes; // keeps the loop from being optimised away
    }
    double s = seconds_since(start), cpu = cpu_seconds() - cpu_start;
    std::printf("reader only:      %llu events, wall %.3f s = %.1f M events/s; cpu %.3f s = %.1f M "
                "events/s, %.0f MB/s (checksum %llu)\n",
                static_cast<unsigned long long>(events), s, events / s / 1e6, cpu,
                events / cpu / 1e6, file_bytes / cpu / 1e6,
                static_cast<unsigned long long>(checksum));
    return 0;
}

int read_and_replay(const std::string &path, const std::string &torch)
{
    auto version = xmem::sim::TorchVersion::parse(torch);
    if (!version.ok()) {
        std::fprintf(stderr, "%s\n", version.error().message.c_str());
        return 2;
    }
    xmem::sim::DeviceCachingAllocator allocator(
        xmem::sim::AllocatorConfig::defaults(version.value()));
    auto start = Clock::now();
    double cpu_start = cpu_seconds();
    auto reader = xmem::trace::CompactTraceReader::open(path);
    if (!reader.ok())
        return 2;
    auto report = xmem::cli::replay_compact(reader.value(), allocator, nullptr);
    if (!report.ok()) {
        std::fprintf(stderr, "%s\n", report.error().message.c_str());
        return 2;
    }
    double s = seconds_since(start), cpu = cpu_seconds() - cpu_start;
    uint64_t events = report.value().events;
    std::printf("reader + replay:  %llu events (%llu allocator calls), wall %.3f s = %.1f M "
                "events/s; cpu %.3f s = %.1f M events/s\n",
                static_cast<unsigned long long>(events),
                static_cast<unsigned long long>(report.value().gpu_calls), s, events / s / 1e6, cpu,
                events / cpu / 1e6);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2 || std::string(argv[1]) == "--help") {
        std::fprintf(argc < 2 ? stderr : stdout, "usage: xmem trace-bench TRACE [TORCH_VERSION]\n");
        return argc < 2 ? 2 : 0;
    }
    struct stat st {
    };
    if (stat(argv[1], &st) != 0) {
        std::fprintf(stderr, "xmem: %s: cannot open trace\n", argv[1]);
        return 2;
    }
    int rc = read_only(argv[1], static_cast<uint64_t>(st.st_size));
    if (rc == 0)
        rc = read_and_replay(argv[1], argc > 2 ? argv[2] : "2.6");
    return rc;
}
