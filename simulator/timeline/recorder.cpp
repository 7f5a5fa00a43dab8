#include "timeline/recorder.h"

#include <algorithm>

namespace xmem::timeline
{

namespace
{

void absorb(Bucket &into, const Bucket &from)
{
    into.last_event = std::max(into.last_event, from.last_event);
    into.min_allocated = std::min(into.min_allocated, from.min_allocated);
    into.max_allocated = std::max(into.max_allocated, from.max_allocated);
    into.min_reserved = std::min(into.min_reserved, from.min_reserved);
    into.max_reserved = std::max(into.max_reserved, from.max_reserved);
}

} // namespace

TimelineRecorder::TimelineRecorder(size_t max_buckets, size_t max_markers)
    : m_max_buckets(std::max<size_t>(max_buckets, 2)), m_max_markers(max_markers)
{
    m_buckets.reserve(m_max_buckets);
}

void TimelineRecorder::copy_layers(size_t to, size_t from)
{
    size_t n = m_layers.size();
    if (n && to != from)
        std::copy_n(m_layer_values.begin() + from * n, n, m_layer_values.begin() + to * n);
}

// Doubles the bucket width: buckets whose slots fall into the same wider slot merge; the
// merged bucket keeps the layers of the higher one.
void TimelineRecorder::halve_resolution()
{
    m_width *= 2;
    size_t out = 0;
    for (size_t i = 0; i < m_buckets.size(); ++i) {
        if (out > 0 &&
            m_buckets[out - 1].first_event / m_width == m_buckets[i].first_event / m_width) {
            if (m_buckets[i].max_allocated > m_buckets[out - 1].max_allocated)
                copy_layers(out - 1, i);
            absorb(m_buckets[out - 1], m_buckets[i]);
        } else {
            copy_layers(out, i);
            m_buckets[out++] = m_buckets[i];
        }
    }
    m_buckets.resize(out);
    m_layer_values.resize(out * m_layers.size());
}

void TimelineRecorder::sample(uint64_t event, uint64_t allocated, uint64_t reserved)
{
    if (m_samples > 0 && event < m_last_event)
        event = m_last_event; // indices must not go back; clamp rather than corrupt buckets
    ++m_samples;
    m_last_event = event;
    m_stack_peak = allocated > m_peak_allocated.value || m_samples == 1;
    if (m_stack_peak)
        m_peak_allocated = {allocated, event};
    if (reserved > m_peak_reserved.value || m_samples == 1)
        m_peak_reserved = {reserved, event};

    Bucket point{event, event, allocated, allocated, reserved, reserved};
    auto same_slot = [&] {
        return !m_buckets.empty() && m_buckets.back().first_event / m_width == event / m_width;
    };
    bool joins = same_slot();
    while (!joins && m_buckets.size() >= m_max_buckets) {
        halve_resolution();
        joins = same_slot();
    }
    if (joins) {
        Bucket &last = m_buckets.back();
        m_stack_bucket = allocated > last.max_allocated ? m_buckets.size() - 1 : k_none;
        absorb(last, point);
        return;
    }
    m_buckets.push_back(point);
    m_layer_values.resize(m_buckets.size() * m_layers.size());
    m_stack_bucket = m_buckets.size() - 1;
}

void TimelineRecorder::set_layers(std::vector<std::string> names, std::vector<LayerGroup> groups)
{
    m_layers = std::move(names);
    m_groups = std::move(groups);
    m_layer_values.assign(m_buckets.size() * m_layers.size(), 0);
    m_peak_layers.assign(m_layers.size(), 0);
}

void TimelineRecorder::stack(const uint64_t *values)
{
    size_t n = m_layers.size();
    if (m_stack_bucket != k_none)
        std::copy_n(values, n, m_layer_values.begin() + m_stack_bucket * n);
    if (m_stack_peak)
        std::copy_n(values, n, m_peak_layers.begin());
}

void TimelineRecorder::set_peak_blocks(std::vector<PeakBlock> blocks, uint64_t rest_bytes,
                                       size_t rest_count)
{
    m_peak_blocks = std::move(blocks);
    m_peak_rest_bytes = rest_bytes;
    m_peak_rest_count = rest_count;
}

void TimelineRecorder::mark(uint64_t event, MarkerKind kind, std::string_view label)
{
    if (m_markers.size() >= m_max_markers) {
        // Make room for a step boundary by dropping the latest phase marker.
        auto phase = std::find_if(m_markers.rbegin(), m_markers.rend(),
                                  [](const Marker &m) { return m.kind == MarkerKind::phase; });
        if (kind == MarkerKind::phase || phase == m_markers.rend()) {
            ++m_markers_dropped;
            return;
        }
        m_markers.erase(std::next(phase).base());
        ++m_markers_dropped;
    }
    m_markers.push_back(Marker{event, kind, std::string(label)});
}

} // namespace xmem::timeline
