// What holds the memory at the peak, by module and by op (issue 30).
//
// Every storage's context names the module that made it and the op (docs/trace-format.md,
// "Interned context strings": `MODULE|OUTER>INNER`). The tracker keeps the live requested
// bytes of each module and of each innermost op as the replay runs, and the caller asks it
// to remember them whenever allocated bytes reach a new peak. Storages made outside any
// module (the weights' set-up, a backward's gradients, the optimizer's state) group by their
// category instead, "(gradients, no module)", and those xmem inserts (cuBLAS workspaces,
// foreach lists) under "(inserted by xmem)".
#pragma once

#include "analysis/categorize.h"
#include "analysis/workload.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace xmem::analysis
{

// The largest groups at the peak, largest first, and what the others hold together.
struct Share {
    std::string name;
    uint64_t bytes = 0;
};
struct Ranking {
    std::vector<Share> top;
    uint64_t rest_bytes = 0;
    size_t rest_count = 0;
};
struct Attribution {
    Ranking modules;
    Ranking ops;
};

// How many groups the report names before "the rest".
constexpr size_t k_attribution_top = 10;

class AttributionTracker
{
  public:
    // CATEGORIES: categorize(work), which names what a storage outside any module is.
    AttributionTracker(const Workload &work, const std::vector<Category> &categories);
    // INDEX is the alloc event's index in the workload; BYTES its requested bytes.
    void on_alloc(uint64_t index, uint64_t bytes);
    void on_free(uint64_t index, uint64_t bytes);
    // Allocated bytes reached a new peak: remember who holds them.
    void remember_peak();
    Attribution at_peak(size_t top) const;

    // For the timeline's stack (timeline_stack.h): a module group by name (k_no_group when
    // no storage has it), its live bytes now, and what made an alloc event's storage.
    static constexpr uint32_t k_no_group = UINT32_MAX;
    uint32_t module_group(const std::string &name) const;
    uint64_t module_live(uint32_t group) const { return m_modules.live[group]; }
    const std::string &module_of(uint64_t index) const
    {
        return m_modules.names[m_module_of[index]];
    }
    const std::string &op_of(uint64_t index) const { return m_ops.names[m_op_of[index]]; }

  private:
    struct Groups {
        std::vector<std::string> names;
        std::unordered_map<std::string, uint32_t> by_name;
        std::vector<uint64_t> live;
        std::vector<uint64_t> at_peak;
    };
    static uint32_t group_of(Groups &g, std::string_view name);
    static Ranking rank(const Groups &g, size_t top);

    std::vector<uint32_t> m_module_of; // per event index: its module's group
    std::vector<uint32_t> m_op_of;     // per event index: its op's group
    Groups m_modules;
    Groups m_ops;
};

} // namespace xmem::analysis
