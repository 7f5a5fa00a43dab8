// What the estimate's timeline stacks (issue 30): live requested bytes by category and by
// the modules that rank first at the allocated peak, and the storages live at that peak.
//
// The ranking comes from a first replay (the estimate's own), so the timeline replays the
// workload a second time with this feed attached; `replay_timeline()` in replay.h does both.
// Layers: the categories in their order, then the top modules, then "other modules" when
// the ranking has a rest. Both halves add up to the same live bytes at every event.
#pragma once

#include "analysis/attribution.h"
#include "analysis/categorize.h"
#include "timeline/recorder.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace xmem::analysis
{

// How many storages live at the peak the page names one by one (the rest are summed).
constexpr size_t k_timeline_peak_blocks = 40;

class TimelineStack
{
  public:
    // PEAK_EVENT: the event index at which the first replay saw the allocated peak.
    TimelineStack(timeline::TimelineRecorder &timeline, const AttributionTracker &attribution,
                  const Ranking &modules, uint64_t peak_event);
    void on_alloc(uint64_t index, uint64_t bytes);
    void on_free(uint64_t index);
    // After every event, once sample() has run: LIVE is the live bytes by category.
    void after_event(uint64_t index, const CategoryBytes &live);

  private:
    void name_peak_blocks();

    timeline::TimelineRecorder &m_timeline;
    const AttributionTracker &m_attribution;
    std::vector<uint32_t> m_module_groups; // the top modules' groups, in ranking order
    bool m_has_rest;
    uint64_t m_peak_event;
    std::vector<uint64_t> m_values;                // one event's layers
    std::unordered_map<uint64_t, uint64_t> m_live; // live storage: alloc index -> bytes
};

} // namespace xmem::analysis
