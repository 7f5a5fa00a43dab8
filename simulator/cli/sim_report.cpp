#include "cli/sim_report.h"

#include "trace/units.h"

#include <nlohmann/json.hpp>

#include <cinttypes>

namespace xmem::cli
{

namespace
{

using ordered_json = nlohmann::ordered_json;
using xmem::trace::format_bytes;

ordered_json segment_json(const std::optional<SegmentRecord> &record)
{
    if (!record)
        return nullptr;
    return ordered_json{{"action", record->action},
                        {"addr", record->addr},
                        {"size", record->size},
                        {"stream", record->stream},
                        {"event", record->event}};
}

// [{"addr", "min", "max"}]: block sizes of a rebuilt partial trace that are only bounded.
ordered_json undetermined_json(const std::vector<SizeBound> &bounds)
{
    ordered_json out = ordered_json::array();
    for (const SizeBound &b : bounds)
        out.push_back({{"addr", b.addr}, {"min", b.min}, {"max", b.max}});
    return out;
}

ordered_json verify_json(const VerifyReport &v)
{
    ordered_json out;
    out["segment_events_matched"] = v.compared;
    out["block_addresses_matched"] = v.blocks_matched;
    out["ooms_matched"] = v.ooms_matched;
    out["peaks_matched"] = v.peaks_matched;
    out["diverged"] = v.diverged;
    if (v.diverged) {
        out["divergence"] = {{"kind", v.kind},
                             {"event", v.divergence_event},
                             {"expected", segment_json(v.expected)},
                             {"got", segment_json(v.got)},
                             {"pool_state", v.pool_state}};
    }
    return out;
}

int64_t stat(const xmem::sim::DeviceStats &stats, const char *key)
{
    int64_t value = 0;
    stats.get(key, &value);
    return value;
}

std::string describe(const std::optional<SegmentRecord> &r)
{
    if (!r)
        return "nothing";
    if (r->action == "reserved_peak" || r->action == "requested_peak")
        return r->action + " " + std::to_string(r->size) + " B";
    char addr[24];
    std::snprintf(addr, sizeof addr, "0x%" PRIx64, r->addr);
    return r->action + " of " + format_bytes(r->size) + " at " + addr + " on stream " +
           std::to_string(r->stream);
}

} // namespace

std::string sim_report_json(const RunInfo &run, const ReplayReport &report,
                            const xmem::sim::DeviceStats &stats)
{
    ordered_json out;
    out["trace"] = run.trace;
    out["format"] = report.format;
    out["torch"] = run.torch;
    out["torch_source"] = run.torch_source;
    out["alloc_conf"] = run.alloc_conf;
    out["capacity"] = run.capacity ? ordered_json(*run.capacity) : ordered_json(nullptr);
    out["events"] = report.events;
    out["allocator_calls"] = report.gpu_calls;
    if (report.oom) {
        const OomReport &o = *report.oom;
        out["oom"] = {{"size", o.size},
                      {"alloc_size", o.alloc_size},
                      {"message", o.message},
                      {"event", o.event}};
        if (o.line)
            out["oom"]["line"] = o.line;
    } else {
        out["oom"] = nullptr;
    }
    if (report.format == "snapshot") {
        out["snapshot"] = {
            {"real_reserved_peak", report.real_reserved_peak},
            {"real_requested_peak", report.real_requested_peak},
            {"real_ooms", report.real_ooms},
            {"partial", report.partial},
            {"rebuild", report.partial ? ordered_json(report.rebuild) : ordered_json(nullptr)},
            {"undetermined_sizes",
             report.partial ? undetermined_json(report.undetermined_sizes) : ordered_json(nullptr)},
            {"reserved_at_start", report.reserved_at_start},
            {"frees_of_unrecorded_blocks", report.unknown_frees}};
        if (report.verify.ran)
            out["verify"] = verify_json(report.verify);
    }
    stats.for_each([&](std::string_view key, int64_t value) { out[std::string(key)] = value; });
    out["replay_seconds"] = run.seconds;
    return out.dump(2) + "\n";
}

void print_sim_summary(std::FILE *f, const RunInfo &run, const ReplayReport &report,
                       const xmem::sim::DeviceStats &stats)
{
    std::fprintf(f, "xmem sim: %s (%s, %" PRIu64 " events, torch %s from %s)\n", run.trace.c_str(),
                 report.format.c_str(), report.events, run.torch.c_str(), run.torch_source.c_str());
    std::fprintf(f, "  capacity          %s\n",
                 run.capacity ? format_bytes(*run.capacity).c_str() : "unlimited");
    auto line = [&](const char *label, const char *key) {
        std::fprintf(f, "  %-17s %s\n", label,
                     format_bytes(static_cast<uint64_t>(stat(stats, key))).c_str());
    };
    line("peak allocated", "allocated_bytes.all.peak");
    line("peak reserved", "reserved_bytes.all.peak");
    int64_t requested = 0;
    if (stats.get("requested_bytes.all.peak", &requested))
        line("peak requested", "requested_bytes.all.peak");
    line("allocated at end", "allocated_bytes.all.current");
    line("reserved at end", "reserved_bytes.all.current");
    std::fprintf(f, "  segments          %" PRId64 " at end, %" PRId64 " at peak\n",
                 stat(stats, "segment.all.current"), stat(stats, "segment.all.peak"));
    if (report.oom)
        std::fprintf(f, "  OUT OF MEMORY at event %" PRIu64 "%s: %s\n", report.oom->event,
                     report.oom->line ? (" (line " + std::to_string(report.oom->line) + ")").c_str()
                                      : "",
                     report.oom->message.c_str());
    else
        std::fprintf(f, "  out of memory     no\n");
    if (report.format == "snapshot") {
        if (report.partial)
            std::fprintf(f, "  partial trace     %s\n", report.rebuild.c_str());
        const char *window = report.partial ? "recorded window, " : "";
        std::fprintf(f, "  real peak reserved %s (%sfrom the snapshot's segment events)\n",
                     format_bytes(report.real_reserved_peak).c_str(), window);
        std::fprintf(f, "  real peak requested %s (%sfrom the snapshot's allocs and frees)\n",
                     format_bytes(report.real_requested_peak).c_str(), window);
        if (report.partial && report.rebuild.rfind("rebuilt", 0) == 0)
            std::fprintf(f,
                         "  whole process     reserved at least %s before recording (the "
                         "segments held at entry 0); earlier peaks are not in the trace\n",
                         format_bytes(report.reserved_at_start).c_str());
        if (report.unknown_frees)
            std::fprintf(f,
                         "  note: %" PRIu64 " frees of blocks allocated before recording began; "
                         "peaks may be low (record history before the first allocation)\n",
                         report.unknown_frees);
    }
    const VerifyReport &v = report.verify;
    if (v.ran && !v.diverged)
        std::fprintf(f,
                     "  verify            %" PRIu64 " segment events, %" PRIu64
                     " block addresses, %" PRIu64 " OOMs and %" PRIu64 " peaks match the GPU's\n",
                     v.compared, v.blocks_matched, v.ooms_matched, v.peaks_matched);
    if (v.ran && v.diverged) {
        std::fprintf(f,
                     "  verify            DIVERGED (%s) at snapshot entry %" PRIu64
                     " after %" PRIu64 " matching segment events and %" PRIu64
                     " block addresses: expected %s, got %s\n",
                     v.kind.c_str(), v.divergence_event, v.compared, v.blocks_matched,
                     describe(v.expected).c_str(), describe(v.got).c_str());
        for (const std::string &line : v.pool_state)
            std::fprintf(f, "    %s\n", line.c_str());
    }
    if (run.timeline)
        std::fprintf(f, "  timeline          %s\n", run.timeline->c_str());
}

} // namespace xmem::cli
