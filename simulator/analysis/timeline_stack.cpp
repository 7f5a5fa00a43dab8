#include "analysis/timeline_stack.h"

#include <algorithm>

namespace xmem::analysis
{

TimelineStack::TimelineStack(timeline::TimelineRecorder &timeline,
                             const AttributionTracker &attribution, const Ranking &modules,
                             uint64_t peak_event)
    : m_timeline(timeline), m_attribution(attribution), m_has_rest(modules.rest_count > 0),
      m_peak_event(peak_event)
{
    std::vector<std::string> layers;
    for (size_t c = 0; c < k_categories; ++c)
        layers.emplace_back(category_name(static_cast<Category>(c)));
    for (const Share &s : modules.top) {
        m_module_groups.push_back(attribution.module_group(s.name));
        layers.push_back(s.name);
    }
    if (m_has_rest)
        layers.push_back("other modules (" + std::to_string(modules.rest_count) + ")");
    m_values.resize(layers.size());
    std::vector<timeline::LayerGroup> groups{
        {"Live memory by category", "category", 0, k_categories},
        {"Live memory by module (the largest at the peak)", "module", k_categories, layers.size()}};
    m_timeline.set_layers(std::move(layers), std::move(groups));
}

void TimelineStack::on_alloc(uint64_t index, uint64_t bytes)
{
    m_live[index] = bytes;
}

void TimelineStack::on_free(uint64_t index)
{
    m_live.erase(index);
}

void TimelineStack::after_event(uint64_t index, const CategoryBytes &live)
{
    uint64_t total = 0;
    for (size_t c = 0; c < k_categories; ++c) {
        m_values[c] = live[c];
        total += live[c];
    }
    size_t k = k_categories;
    uint64_t named = 0;
    for (uint32_t group : m_module_groups) {
        uint64_t bytes =
            group == AttributionTracker::k_no_group ? 0 : m_attribution.module_live(group);
        m_values[k++] = bytes;
        named += bytes;
    }
    if (m_has_rest)
        m_values[k] = total - named;
    m_timeline.stack(m_values.data());
    if (index == m_peak_event)
        name_peak_blocks();
}

// The largest storages live now, largest first; the others as one sum.
void TimelineStack::name_peak_blocks()
{
    std::vector<std::pair<uint64_t, uint64_t>> blocks; // bytes, alloc index
    blocks.reserve(m_live.size());
    for (const auto &[index, bytes] : m_live)
        blocks.emplace_back(bytes, index);
    size_t named = std::min(blocks.size(), k_timeline_peak_blocks);
    std::partial_sort(blocks.begin(), blocks.begin() + named, blocks.end(),
                      [](const auto &a, const auto &b) {
                          return a.first != b.first ? a.first > b.first : a.second < b.second;
                      });
    std::vector<timeline::PeakBlock> out;
    uint64_t rest = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
        if (i < named)
            out.push_back({m_attribution.module_of(blocks[i].second),
                           std::string(m_attribution.op_of(blocks[i].second)), blocks[i].first});
        else
            rest += blocks[i].first;
    }
    m_timeline.set_peak_blocks(std::move(out), rest, blocks.size() - named);
}

} // namespace xmem::analysis
