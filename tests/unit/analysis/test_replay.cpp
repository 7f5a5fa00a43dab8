// replay: the workload through the simulated allocator, peaks per iteration and the
// breakdown at the allocated peak (sizes hand-computed from allocator.md 4).
#include "analysis/replay.h"

#include "allocator/allocator.h"
#include "replay/replay_loop.h"

#include "est_helpers.h"

using namespace esttest;

namespace
{

xmem::sim::AllocatorConfig config(uint64_t total, uint64_t outside)
{
    auto cfg = xmem::sim::AllocatorConfig::defaults({2, 1});
    cfg.device_total_bytes = total;
    cfg.device_used_outside_bytes = outside;
    return cfg;
}

Workload two_iterations()
{
    Builder b;
    b.phase(Phase::setup).alloc(1, 4 * MiB); // 20 MiB segment
    b.iteration(1)
        .phase(Phase::forward)
        .alloc(2, 1000)
        .alloc(3, 12 * MiB); // 2 MiB small seg; 12 MiB from the 16 MiB tail
    b.phase(Phase::backward).alloc(4, 4 * MiB).free(3).free(2);      // takes the 4 MiB remainder
    b.iteration(2).phase(Phase::forward).alloc(5, 30 * MiB).free(5); // new 30 MiB segment
    return b.build();
}

} // namespace

static void peaks_per_iteration_and_breakdown(void **)
{
    auto r = replay(two_iterations(), config(0, 0), nullptr);
    assert_true(r.ok());
    const ReplayResult &res = r.value();
    EXPECT_U64(res.reserved_peak, 52 * MiB);
    EXPECT_U64(res.first_reserved_peak, 22 * MiB);
    assert_true(res.has_steady);
    EXPECT_U64(res.steady_reserved_peak, 52 * MiB);
    EXPECT_U64(res.allocated_peak, 38 * MiB);
    EXPECT_U64(res.live_at_peak[static_cast<size_t>(Category::weights)], 4 * MiB);
    EXPECT_U64(res.live_at_peak[static_cast<size_t>(Category::gradients)], 4 * MiB);
    EXPECT_U64(res.live_at_peak[static_cast<size_t>(Category::activations)], 30 * MiB);
    EXPECT_U64(res.category_peak[static_cast<size_t>(Category::activations)], 30 * MiB);
    EXPECT_U64(res.iterations.size(), 3);
    EXPECT_U64(res.iterations[1].reserved, 22 * MiB);
    EXPECT_U64(res.iterations[1].allocated, 16 * MiB + 1024 + 4 * MiB);
    assert_false(res.oom);
}

static void out_of_memory_stops_the_replay(void **)
{
    auto r = replay(two_iterations(), config(32 * MiB, 10 * MiB), nullptr);
    assert_true(r.ok());
    assert_true(r.value().oom);
    EXPECT_CONTAINS(r.value().oom_message, "out of memory");
    EXPECT_U64(r.value().reserved_peak, 22 * MiB);
}

static void host_storages_are_not_replayed(void **)
{
    Builder b;
    b.iteration(1).phase(Phase::data).host(1, 64 * MiB).alloc(2, 1000).free(1).free(2);
    auto r = replay(b.build(), config(0, 0), nullptr);
    assert_true(r.ok());
    EXPECT_U64(r.value().reserved_peak, 2 * MiB);
    EXPECT_U64(r.value().mallocs, 1);
}

static void timeline_gets_samples_and_marks(void **)
{
    xmem::timeline::TimelineRecorder tl;
    auto r = replay(two_iterations(), config(0, 0), &tl);
    assert_true(r.ok());
    EXPECT_U64(tl.peak_reserved().value, 52 * MiB);
    size_t iterations = 0, phases = 0;
    for (const auto &m : tl.markers())
        (m.kind == xmem::timeline::MarkerKind::step ? iterations : phases)++;
    EXPECT_U64(iterations, 2);
    EXPECT_U64(phases, 3); // forward, backward, forward (setup is the initial phase)
}

// The timeline's second replay stacks the same live bytes the first one measured at the peak:
// the category layers are the breakdown, the module layers add up to it, and the storages
// named at the peak (with their rest) too.
static void timeline_stacks_what_the_peak_holds(void **)
{
    Workload work = two_iterations();
    auto first = replay(work, config(0, 0), nullptr);
    assert_true(first.ok());
    xmem::timeline::TimelineRecorder tl;
    assert_true(replay_timeline(work, config(0, 0), first.value(), tl).ok());
    const auto &peak = tl.peak_layers();
    EXPECT_U64(tl.peak_allocated().event, first.value().allocated_peak_event);
    uint64_t live = 0, modules = 0, blocks = tl.peak_rest_bytes();
    for (size_t c = 0; c < k_categories; ++c) {
        EXPECT_U64(peak[c], first.value().live_at_peak[c]);
        live += peak[c];
    }
    for (size_t k = k_categories; k < peak.size(); ++k)
        modules += peak[k];
    for (const auto &b : tl.peak_blocks())
        blocks += b.bytes;
    EXPECT_U64(modules, live);
    EXPECT_U64(blocks, live);
    EXPECT_U64(tl.layer_groups().size(), 2);
    assert_true(live > 0);
}

namespace
{

// The workload's events as `xmem sim` would read them from a trace.
class EventList : public xmem::replay::EventSource
{
  public:
    explicit EventList(const std::vector<TraceEvent> &events) : m_events(events) {}
    xmem::Result<bool> next(TraceEvent &event) override
    {
        if (m_next == m_events.size())
            return xmem::Result<bool>::ok(false);
        event = m_events[m_next++];
        return xmem::Result<bool>::ok(true);
    }

  private:
    const std::vector<TraceEvent> &m_events;
    size_t m_next = 0;
};

} // namespace

// One loop (replay/replay_loop.h) behind the estimate and `xmem sim`: the same events give
// the same peaks and malloc count; the options alone tell them apart.
static void the_estimate_and_xmem_sim_share_one_loop(void **)
{
    Workload work = two_iterations();
    auto estimate = replay(work, config(0, 0), nullptr);
    assert_true(estimate.ok());

    xmem::sim::DeviceCachingAllocator allocator(config(0, 0));
    EventList events(work.events);
    xmem::replay::ReplayOptions as_sim;
    as_sim.trace_name = "t.xtrace";
    auto sim = xmem::replay::replay_events(events, allocator, as_sim, nullptr, nullptr);
    assert_true(sim.ok());
    EXPECT_U64(sim.value().mallocs, estimate.value().mallocs);
    EXPECT_U64(sim.value().events, work.events.size());
    EXPECT_U64(static_cast<uint64_t>(allocator.stats().reserved_bytes[0].peak),
               estimate.value().reserved_peak);
    EXPECT_U64(static_cast<uint64_t>(allocator.stats().allocated_bytes[0].peak),
               estimate.value().allocated_peak);
}

static void a_repeated_phase_is_marked_only_where_asked(void **)
{
    Builder b;
    b.iteration(1).phase(Phase::forward).alloc(1, 1000).phase(Phase::forward).free(1);
    Workload work = b.build();
    for (bool repeated : {true, false}) {
        xmem::sim::DeviceCachingAllocator allocator(config(0, 0));
        xmem::timeline::TimelineRecorder tl;
        EventList events(work.events);
        xmem::replay::ReplayOptions options;
        options.mark_repeated_phases = repeated;
        assert_true(xmem::replay::replay_events(events, allocator, options, &tl, nullptr).ok());
        size_t phases = 0;
        for (const auto &m : tl.markers())
            phases += m.kind == xmem::timeline::MarkerKind::phase;
        EXPECT_U64(phases, repeated ? 2 : 1);
    }
}

static void a_refusal_names_the_trace_line_only_for_a_trace(void **)
{
    TraceEvent bad{};
    bad.kind = EventKind::set_fraction;
    bad.fraction = 1.5; // the allocator refuses a fraction above 1
    bad.line = 7;
    std::vector<TraceEvent> list{bad};
    for (std::string name : {"t.xtrace", ""}) {
        xmem::sim::DeviceCachingAllocator allocator(config(0, 0));
        EventList events(list);
        xmem::replay::ReplayOptions options;
        options.trace_name = name;
        auto r = xmem::replay::replay_events(events, allocator, options, nullptr, nullptr);
        assert_false(r.ok());
        bool named = r.error().message.rfind("xmem: t.xtrace:7: the simulator refused this "
                                             "event: ",
                                             0) == 0;
        assert_true(named == !name.empty());
    }
}

int run_replay_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(peaks_per_iteration_and_breakdown),
        cmocka_unit_test(timeline_stacks_what_the_peak_holds),
        cmocka_unit_test(out_of_memory_stops_the_replay),
        cmocka_unit_test(host_storages_are_not_replayed),
        cmocka_unit_test(timeline_gets_samples_and_marks),
        cmocka_unit_test(the_estimate_and_xmem_sim_share_one_loop),
        cmocka_unit_test(a_repeated_phase_is_marked_only_where_asked),
        cmocka_unit_test(a_refusal_names_the_trace_line_only_for_a_trace),
    };
    return cmocka_run_group_tests_name("replay", tests, nullptr, nullptr);
}
