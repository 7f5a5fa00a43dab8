// TimelineRecorder keeps bounded memory without losing a peak, and its stacked layers at the
// peak exactly; the HTML page is self-contained (no external reference, a script only when
// it has layers to stack) and labels the peaks.
#include "test_helpers.h"
#include "test-list.h"

#include "timeline/html.h"

#include <random>
#include <unistd.h>

using namespace xmem::timeline;

static void buckets_stay_bounded_and_keep_extremes(void **)
{
    TimelineRecorder t(64);
    std::mt19937_64 rng(7);
    uint64_t peak = 0, peak_event = 0, min_alloc = UINT64_MAX;
    for (uint64_t i = 0; i < 1000000; ++i) {
        uint64_t allocated = rng() % 1000000;
        if (i == 777777)
            allocated = 5000000; // one spike among a million events
        if (allocated > peak) {
            peak = allocated;
            peak_event = i;
        }
        min_alloc = std::min(min_alloc, allocated);
        t.sample(i, allocated, allocated + 10);
        assert_true(t.buckets().size() <= 64);
    }
    assert_int_equal(t.peak_allocated().value, 5000000);
    assert_int_equal(t.peak_allocated().event, peak_event);
    assert_int_equal(t.peak_reserved().value, 5000010);
    uint64_t bucket_max = 0, bucket_min = UINT64_MAX;
    uint64_t covered = 0;
    for (const Bucket &b : t.buckets()) {
        bucket_max = std::max(bucket_max, b.max_allocated);
        bucket_min = std::min(bucket_min, b.min_allocated);
        covered += b.last_event - b.first_event + 1;
    }
    assert_int_equal(bucket_max, 5000000); // the spike survives every merge
    assert_int_equal(bucket_min, min_alloc);
    assert_int_equal(covered, 1000000);
    assert_true(t.bucket_width() >= 1000000 / 64);
    assert_int_equal(t.samples(), 1000000);
}

static void one_bucket_per_event_when_small(void **)
{
    TimelineRecorder t(16);
    for (uint64_t i = 0; i < 10; ++i)
        t.sample(i, i * 100, 1000);
    assert_int_equal(t.buckets().size(), 10);
    assert_int_equal(t.bucket_width(), 1);
    assert_int_equal(t.buckets()[3].min_allocated, 300);
    assert_int_equal(t.buckets()[3].max_allocated, 300);
    // The first sample is a peak even if it is zero bytes.
    TimelineRecorder z;
    z.sample(5, 0, 0);
    assert_int_equal(z.peak_reserved().event, 5);
}

static void markers_are_capped_dropping_phases_first(void **)
{
    TimelineRecorder t(16, 4);
    t.mark(0, MarkerKind::phase, "setup");
    t.mark(1, MarkerKind::step, "step 1");
    t.mark(2, MarkerKind::phase, "forward");
    t.mark(3, MarkerKind::phase, "backward");
    t.mark(4, MarkerKind::phase, "optimizer"); // full: a phase is dropped
    t.mark(5, MarkerKind::step, "step 2");     // full: evicts the latest phase
    assert_int_equal(t.markers().size(), 4);
    assert_int_equal(t.markers_dropped(), 2);
    assert_string_equal(t.markers().back().label.c_str(), "step 2");
    assert_string_equal(t.markers()[2].label.c_str(), "forward");
}

static void page_is_self_contained_and_labels_peaks(void **)
{
    TimelineRecorder t;
    t.mark(0, MarkerKind::step, "step <1> & \"more\"");
    t.sample(0, 1 << 20, 2 << 20);
    t.sample(1, 3 << 20, 20 << 20);
    t.sample(2, 0, 20 << 20);
    std::string html = render_timeline_html(t, {"xmem sim: a<b>.xtrace", "torch 2.6"});
    assert_contains(html, "<!DOCTYPE html>");
    assert_contains(html, "<svg");
    assert_contains(html, "peak reserved 20.00 MiB at event 1");
    assert_contains(html, "peak allocated 3.00 MiB at event 1");
    assert_contains(html, "step &lt;1&gt; &amp; &quot;more&quot;");
    assert_contains(html, "xmem sim: a&lt;b&gt;.xtrace");
    assert_true(html.find("<script") == std::string::npos);
    assert_true(html.find("http://") == html.find("http://www.w3.org/2000/svg"));
    assert_true(html.find("https://") == std::string::npos);
}

// Two layers whose sum is the allocated bytes: every bucket keeps the layers of its highest
// sample, so the stack's top is the bucket's maximum, and the peak's layers survive merges.
static void layers_follow_each_bucket_maximum(void **)
{
    TimelineRecorder t(8);
    t.set_layers({"a", "b"}, {{"both", "both", 0, 2}});
    std::mt19937_64 rng(3);
    for (uint64_t i = 0; i < 10000; ++i) {
        uint64_t a = rng() % 1000, b = (i == 4321) ? 7000 : rng() % 1000;
        t.sample(i, a + b, a + b);
        uint64_t values[2] = {a, b};
        t.stack(values);
        assert_true(t.buckets().size() <= 8);
    }
    assert_int_equal(t.peak_allocated().event, 4321);
    assert_int_equal(t.peak_layers()[1], 7000);
    for (size_t i = 0; i < t.buckets().size(); ++i)
        assert_int_equal(t.layer_values(i)[0] + t.layer_values(i)[1], t.buckets()[i].max_allocated);
}

static void page_with_layers_carries_its_data_inline(void **)
{
    TimelineRecorder t;
    t.set_layers({"weights", "module </script><b>"},
                 {{"by category", "category", 0, 1}, {"by module", "module", 1, 2}});
    t.mark(0, MarkerKind::step, "step 1");
    t.sample(0, 3, 4);
    uint64_t values[2] = {1, 2};
    t.stack(values);
    t.set_peak_blocks({{"</script>", "aten::mm", 2}}, 1, 1);
    std::string html = render_timeline_html(t, {"t", "s"});
    assert_contains(html, "<script type=\"application/json\" id=\"xmem-data\">");
    assert_contains(html, "<output id=\"stacked-peak-module\">");
    assert_contains(html, "\"buckets\":[[0,0,1,2]]");
    assert_contains(html, "module \\u003c/script\\u003e\\u003cb\\u003e");
    assert_true(html.find("</script><b>") == std::string::npos);
    assert_true(html.find("<script src") == std::string::npos);
    assert_true(html.find("https://") == std::string::npos);
}

static void writes_the_page_and_reports_bad_paths(void **)
{
    TimelineRecorder t;
    t.sample(0, 1, 2);
    char path[] = "/tmp/xmem-timeline-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    auto written = write_timeline_html(t, {"t", "s"}, path);
    assert_true(written.ok());
    assert_true(written.value() > 1000);
    unlink(path);
    auto bad = write_timeline_html(t, {"t", "s"}, "/nonexistent-dir/t.html");
    assert_false(bad.ok());
    assert_contains(bad.error().message, "xmem: /nonexistent-dir/t.html: cannot write timeline");
}

int run_timeline_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buckets_stay_bounded_and_keep_extremes),
        cmocka_unit_test(one_bucket_per_event_when_small),
        cmocka_unit_test(markers_are_capped_dropping_phases_first),
        cmocka_unit_test(page_is_self_contained_and_labels_peaks),
        cmocka_unit_test(writes_the_page_and_reports_bad_paths),
        cmocka_unit_test(layers_follow_each_bucket_maximum),
        cmocka_unit_test(page_with_layers_carries_its_data_inline),
    };
    return cmocka_run_group_tests_name("timeline", tests, NULL, NULL);
}
