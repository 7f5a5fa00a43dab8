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

// Doubles the bucket width: buckets whose slots fall into the same wider slot merge.
void TimelineRecorder::halve_resolution()
{
    m_width *= 2;
    size_t out = 0;
    for (size_t i = 0; i < m_buckets.size(); ++i) {
        if (out > 0 &&
            m_buckets[out - 1].first_event / m_width == m_buckets[i].first_event / m_width)
            absorb(m_buckets[out - 1], m_buckets[i]);
        else
            m_buckets[out++] = m_buckets[i];
    }
    m_buckets.resize(out);
}

void TimelineRecorder::sample(uint64_t event, uint64_t allocated, uint64_t reserved)
{
    if (m_samples > 0 && event < m_last_event)
        event = m_last_event; // indices must not go back; clamp rather than corrupt buckets
    ++m_samples;
    m_last_event = event;
    if (allocated > m_peak_allocated.value || m_samples == 1)
        m_peak_allocated = {allocated, event};
    if (reserved > m_peak_reserved.value || m_samples == 1)
        m_peak_reserved = {reserved, event};

    Bucket point{event, event, allocated, allocated, reserved, reserved};
    if (!m_buckets.empty() && m_buckets.back().first_event / m_width == event / m_width) {
        absorb(m_buckets.back(), point);
        return;
    }
    while (m_buckets.size() >= m_max_buckets) {
        halve_resolution();
        if (m_buckets.back().first_event / m_width == event / m_width) {
            absorb(m_buckets.back(), point);
            return;
        }
    }
    m_buckets.push_back(point);
}

void TimelineRecorder::mark(uint64_t event, MarkerKind kind, std::string_view label)
{
    if (m_markers.size() >= m_max_markers) {
        // Make room for an iteration boundary by dropping the latest phase marker.
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
