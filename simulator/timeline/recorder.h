// TimelineRecorder: allocated/reserved bytes over the event index, in bounded memory.
//
//   TimelineRecorder timeline;                              // ≤ 2048 buckets, ≤ 512 markers
//   timeline.mark(0, MarkerKind::phase, "setup");           // before or after samples
//   for each replayed event i:  timeline.sample(i, stats.allocated, stats.reserved);
//   timeline.mark(i, MarkerKind::step, "step 1");
//   write_timeline_html(timeline, {"title", "subtitle"}, "out.html");  // timeline/html.h
//
// Samples must come with non-decreasing event indices. Each bucket covers `bucket_width()`
// consecutive events and keeps the min and max of both series, so the plotted envelope
// never hides a spike; when the bucket count would pass the limit, neighbouring buckets
// merge and the width doubles. The exact peaks (value and event) are kept separately.
// Markers past the limit are dropped (phase markers first) and counted.
//
// Stacked layers (optional): after set_layers(names, groups), call stack(values) right after
// each sample() with the layers' bytes at that event (e.g. live bytes by category). A bucket
// keeps the layers as they were at its highest allocated sample, and the recorder keeps them
// exactly at the allocated peak, so a stack drawn from buckets reaches the peak's own figures.
// Memory: buckets x layers values, fixed by the caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xmem::timeline
{

enum class MarkerKind { step, phase, note };

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

// Layers [first, end) drawn as one stacked chart, e.g. {"by category", "category", 0, 7}.
struct LayerGroup {
    std::string title;
    std::string id; // names the chart's peak figure in the page: stacked-peak-ID
    size_t first = 0, end = 0;
};

// One storage live at the allocated peak, for the page's hover text.
struct PeakBlock {
    std::string module;
    std::string op;
    uint64_t bytes = 0;
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
    void set_layers(std::vector<std::string> names, std::vector<LayerGroup> groups);
    void stack(const uint64_t *values); // layers().size() values, for the latest sample
    // The largest storages live at the allocated peak; the caller bounds how many.
    void set_peak_blocks(std::vector<PeakBlock> blocks, uint64_t rest_bytes, size_t rest_count);

    const std::vector<Bucket> &buckets() const { return m_buckets; }
    const std::vector<Marker> &markers() const { return m_markers; }
    uint64_t bucket_width() const { return m_width; }
    uint64_t samples() const { return m_samples; }
    uint64_t last_event() const { return m_last_event; }
    Peak peak_allocated() const { return m_peak_allocated; }
    Peak peak_reserved() const { return m_peak_reserved; }
    uint64_t markers_dropped() const { return m_markers_dropped; }
    const std::vector<std::string> &layers() const { return m_layers; }
    const std::vector<LayerGroup> &layer_groups() const { return m_groups; }
    // The layers' bytes in bucket B (layers().size() values).
    const uint64_t *layer_values(size_t bucket) const
    {
        return m_layer_values.data() + bucket * m_layers.size();
    }
    const std::vector<uint64_t> &peak_layers() const { return m_peak_layers; }
    const std::vector<PeakBlock> &peak_blocks() const { return m_peak_blocks; }
    uint64_t peak_rest_bytes() const { return m_peak_rest_bytes; }
    size_t peak_rest_count() const { return m_peak_rest_count; }

  private:
    void halve_resolution();
    void copy_layers(size_t to, size_t from);

    size_t m_max_buckets;
    size_t m_max_markers;
    uint64_t m_width = 1;
    uint64_t m_samples = 0;
    uint64_t m_last_event = 0;
    std::vector<Bucket> m_buckets;
    std::vector<Marker> m_markers;
    uint64_t m_markers_dropped = 0;
    Peak m_peak_allocated, m_peak_reserved;

    static constexpr size_t k_none = static_cast<size_t>(-1);
    std::vector<std::string> m_layers;
    std::vector<LayerGroup> m_groups;
    std::vector<uint64_t> m_layer_values; // bucket-major
    std::vector<uint64_t> m_peak_layers;
    size_t m_stack_bucket = k_none; // where stack() writes: the sample raised this bucket's max
    bool m_stack_peak = false;      // the sample was a new allocated peak
    std::vector<PeakBlock> m_peak_blocks;
    uint64_t m_peak_rest_bytes = 0;
    size_t m_peak_rest_count = 0;
};

} // namespace xmem::timeline
