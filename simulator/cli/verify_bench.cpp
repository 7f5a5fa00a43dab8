// xmem-verify-bench: time of `xmem sim --verify` on a 1-million-entry snapshot (run by
// `make bench-sim`; target <= 1 s). The snapshot is made by the simulator itself, recording
// its own trace of a training-like mix of allocations, so the verification must also pass:
// a benchmark of a replay that diverged early would measure nothing.
#include "cli/replay.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

namespace
{

constexpr uint64_t k_entries = 1000000;

// CPU seconds of this process: on a shared machine wall time also measures the neighbours,
// so both are printed.
double cpu_seconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Writes the simulator's own trace entries as snapshot JSON.
class SnapshotWriter : public xmem::sim::TraceObserver
{
  public:
    explicit SnapshotWriter(std::FILE *out) : m_out(out)
    {
        std::fputs("{\"device_traces\": [[\n", m_out);
    }
    void on_trace(const xmem::sim::TraceEntry &e) override
    {
        std::fprintf(m_out,
                     "%s{\"action\": \"%s\", \"addr\": %" PRIu64 ", \"size\": %" PRIu64
                     ", \"stream\": %" PRIu64 "}",
                     m_entries ? ",\n" : "", xmem::sim::to_string(e.action), e.addr, e.size,
                     e.stream);
        ++m_entries;
    }
    void close() { std::fputs("\n]]}\n", m_out); }
    uint64_t entries() const { return m_entries; }

  private:
    std::FILE *m_out;
    uint64_t m_entries = 0;
};

xmem::sim::AllocatorConfig config()
{
    auto version = xmem::sim::TorchVersion::parse("2.6");
    return xmem::sim::AllocatorConfig::defaults(version.value());
}

// Layers of activations kept for a backward pass, then freed: a few hundred live blocks
// from 512 B to 64 MiB, with the reuse that makes best fit and splitting matter.
void write_snapshot(std::FILE *out)
{
    xmem::sim::DeviceCachingAllocator allocator(config());
    SnapshotWriter writer(out);
    allocator.set_observer(&writer);
    std::vector<uint64_t> live;
    uint64_t seed = 12345;
    auto next = [&seed] {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        return seed >> 33;
    };
    while (writer.entries() < k_entries) {
        for (int layer = 0; layer < 200 && writer.entries() < k_entries; ++layer) {
            uint64_t shift = 9 + next() % 18; // 512 B .. 64 MiB
            uint64_t size = (uint64_t{1} << shift) + next() % (uint64_t{1} << shift);
            live.push_back(allocator.malloc(size).ptr);
            if (next() % 4 == 0) { // a temporary
                (void)allocator.free(live.back());
                live.pop_back();
            }
        }
        while (!live.empty()) {
            (void)allocator.free(live.back());
            live.pop_back();
        }
    }
    writer.close();
    allocator.set_observer(nullptr);
}

} // namespace

int main()
{
    std::FILE *snapshot = std::tmpfile();
    if (!snapshot) {
        std::perror("xmem: verify-bench: tmpfile");
        return 2;
    }
    write_snapshot(snapshot);
    std::rewind(snapshot);
    xmem::sim::DeviceCachingAllocator allocator(config());
    auto start = std::chrono::steady_clock::now();
    double cpu_start = cpu_seconds();
    auto report = xmem::cli::replay_snapshot(snapshot, "bench.json", {0, true}, allocator, nullptr);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double cpu = cpu_seconds() - cpu_start;
    std::fclose(snapshot);
    if (!report.ok()) {
        std::fprintf(stderr, "%s\n", report.error().message.c_str());
        return 2;
    }
    const xmem::cli::VerifyReport &v = report.value().verify;
    std::printf("verify:           %" PRIu64 "-event snapshot in %.3f s wall, %.3f s cpu (target "
                "<= 1 s): %" PRIu64 " block addresses, %" PRIu64 " segment events, %" PRIu64
                " peaks %s\n",
                report.value().events, seconds, cpu, v.blocks_matched, v.compared, v.peaks_matched,
                v.diverged ? "then DIVERGED" : "match");
    return v.diverged ? 3 : 0;
}
