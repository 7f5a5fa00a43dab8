// Workload: a whole trace held in memory, in the form the analysis passes rewrite.
//
// Why in memory (the trace readers stream): the passes look ahead (when is this storage
// freed? does this op run end before it?) and insert events, and a training trace of a few
// iterations is small (ResNet-50, batch 32: ~7 k events per iteration).
//
// Events xmem inserts carry a context string that starts with "xmem|" (k_xmem_ctx_prefix),
// so later passes, the breakdown and the timeline can tell them from captured ones.
#pragma once

#include "common/result.h"
#include "trace/event.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace xmem::analysis
{

using trace::Device;
using trace::EventKind;
using trace::Phase;
using trace::TraceEvent;

constexpr std::string_view k_xmem_ctx_prefix = "xmem|";

class Workload
{
  public:
    std::vector<TraceEvent> events;
    std::map<std::string, std::string, std::less<>> meta;
    std::vector<std::string> kernels; // K records: "module kind key=value ..."

    // Text of a context string id; "" for 0 or an unknown id.
    std::string_view ctx_text(uint64_t ctx) const;
    // Interns `text` (reusing an existing id for the same text) and returns its id.
    uint64_t intern(std::string_view text);
    // Defines a string under a given id (as the trace's S records do).
    void define_string(uint64_t id, std::string text);
    // A storage id no captured or inserted storage has used.
    uint64_t fresh_id() { return ++m_max_id; }
    void note_id(uint64_t id)
    {
        if (id > m_max_id)
            m_max_id = id;
    }
    // "" if absent.
    std::string_view meta_value(std::string_view key) const;
    bool inserted_by_xmem(const TraceEvent &ev) const;

  private:
    std::unordered_map<uint64_t, std::string> m_strings;
    std::unordered_map<std::string, uint64_t> m_ids_by_text;
    uint64_t m_max_id = 0;
    uint64_t m_max_string = 0;
};

// Reads a whole compact trace (docs/trace-format.md); errors are the reader's one-liners.
Result<Workload> load_workload(const std::string &path);

// Writes `work` as a compact trace (its metadata, strings before first use, events, kernels);
// `xmem estimate --analysed-trace` uses it to show what the simulator replays.
Result<void> write_workload(const Workload &work, const std::string &path);

// Builds an event in the current iteration/phase of `like` (used by the passes).
TraceEvent make_alloc(uint64_t id, uint64_t bytes, uint64_t ctx, const TraceEvent &like);
TraceEvent make_free(uint64_t id, uint64_t bytes, const TraceEvent &like);

} // namespace xmem::analysis
