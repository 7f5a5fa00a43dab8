// TimelineRecorder: allocated/reserved bytes over the event index, in bounded memory.
//
//   TimelineRecorder timeline;                              // ≤ 2048 buckets, ≤ 512 markers
//   timeline.mark(0, MarkerKind::phase, "setup");           // before or after samples
//   for each replayed event i:  timeline.sample(i, stats.allocated, stats.reserved);
//   timeline.mark(i, MarkerKind::iteration, "iteration 1");
//   write_timeline_html(timeline, {"title", "subtitle"}, "out.html");  // timeline/html.h
//
// Samples must come with non-decreasing event indices. Each bucket covers `bucket_width()`
// consecutive events and keeps the min and max of both series, so the plotted envelope
// never hides a spike; when the bucket count would pass the limit, neighbouring buckets
// merge and the width doubles. The exact peaks (value and event) are kept separately.
// Markers past the limit are dropped (phase markers first) and counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xmem::timeline
{

enum class MarkerKind { iteration, phase, note };

struct Marker {
    uint64_t event;
    MarkerKind kind;
    std::string label;
};

struct Bucket {
    uint64_t first_event; // first event index seen in the bucket
    uint64_t last_event;
    uint64_t min_allocated, max_allocated;
    uint64_t min_reserved, max_reserved;
};

struct Peak {
    uint64_t value = 0;
    uint64_t event = 0; // first event at which the peak was reached
};

class TimelineRecorder
{
  public:
    explicit TimelineRecorder(size_t max_buckets = 2048, size_t max_markers = 512);

    void sample(uint64_t event, uint64_t allocated, uint64_t reserved);
    void mark(uint64_t event, MarkerKind kind, std::string_view label);

    const std::vector<Bucket> &buckets() const { return m_buckets; }
    const std::vector<Marker> &markers() const { return m_markers; }
    uint64_t bucket_width() const { return m_width; }
    uint64_t samples() const { return m_samples; }
    uint64_t last_event() const { return m_last_event; }
    Peak peak_allocated() const { return m_peak_allocated; }
    Peak peak_reserved() const { return m_peak_reserved; }
    uint64_t markers_dropped() const { return m_markers_dropped; }

  private:
    void halve_resolution();

    size_t m_max_buckets;
    size_t m_max_markers;
    uint64_t m_width = 1;
    uint64_t m_samples = 0;
    uint64_t m_last_event = 0;
    std::vector<Bucket> m_buckets;
    std::vector<Marker> m_markers;
    uint64_t m_markers_dropped = 0;
    Peak m_peak_allocated, m_peak_reserved;
};

} // namespace xmem::timeline
