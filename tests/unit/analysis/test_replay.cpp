// replay: the workload through the simulated allocator, peaks per iteration and the
// breakdown at the allocated peak (sizes hand-computed from allocator.md 4).
#include "analysis/replay.h"

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
        (m.kind == xmem::timeline::MarkerKind::iteration ? iterations : phases)++;
    EXPECT_U64(iterations, 2);
    EXPECT_U64(phases, 3); // forward, backward, forward (setup is the initial phase)
}

int run_replay_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(peaks_per_iteration_and_breakdown),
        cmocka_unit_test(out_of_memory_stops_the_replay),
        cmocka_unit_test(host_storages_are_not_replayed),
        cmocka_unit_test(timeline_gets_samples_and_marks),
    };
    return cmocka_run_group_tests_name("replay", tests, nullptr, nullptr);
}
