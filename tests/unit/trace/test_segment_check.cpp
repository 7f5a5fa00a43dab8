// SegmentCheck pairs real and simulated segment events and hands out real addresses only
// when they cannot collide with a segment the simulator holds.
#include "test_helpers.h"
#include "test-list.h"

#include "cli/segment_check.h"

using xmem::cli::SegmentCheck;
using xmem::cli::SegmentRecord;
using xmem::sim::TraceAction;
using xmem::sim::TraceEntry;

static const uint64_t A = 0x7f0000000000ULL;

static void real_addresses_are_handed_out_in_order(void **)
{
    SegmentCheck c;
    c.on_real(SegmentRecord{"segment_alloc", A, 2 << 20, 0, 0});
    c.on_real(SegmentRecord{"segment_alloc", A + (2 << 20), 20 << 20, 0, 1});
    assert_int_equal(c.next_segment_address(2 << 20, 0), A);
    c.on_trace(TraceEntry{TraceAction::segment_alloc, A, 2 << 20, 0});
    // Size mismatch: the simulator diverged, so the real address is not reused.
    uint64_t other = c.next_segment_address(4 << 20, 0);
    assert_true(other >= SegmentCheck::k_synthetic_base);
    // Nothing left from the trace: synthetic addresses, 2 MiB apart at least.
    uint64_t next = c.next_segment_address(2 << 20, 0);
    assert_int_equal(next, other + (4 << 20));
}

static void a_live_simulated_segment_blocks_its_address(void **)
{
    SegmentCheck c;
    c.on_trace(TraceEntry{TraceAction::segment_alloc, A, 20 << 20, 0});
    c.on_real(SegmentRecord{"segment_alloc", A + (2 << 20), 2 << 20, 0, 0}); // inside A's range
    assert_true(c.next_segment_address(2 << 20, 0) >= SegmentCheck::k_synthetic_base);
    c.on_trace(TraceEntry{TraceAction::segment_free, A, 20 << 20, 0});
    c.on_real(SegmentRecord{"segment_alloc", A + (2 << 20), 2 << 20, 0, 1});
    assert_int_equal(c.next_segment_address(2 << 20, 0), A + (2 << 20));
    assert_false(c.holds_segment(A));
}

static void reports_the_first_divergence(void **)
{
    SegmentCheck c;
    c.on_real(SegmentRecord{"segment_alloc", A, 2 << 20, 0, 3});
    c.set_event(4);
    c.on_trace(TraceEntry{TraceAction::alloc, A, 512, 0}); // ignored: not a segment event
    c.on_trace(TraceEntry{TraceAction::segment_alloc, A, 2 << 20, 0});
    c.compare(false);
    assert_int_equal(c.report().compared, 1);
    assert_false(c.report().diverged);
    c.on_real(SegmentRecord{"segment_free", A, 2 << 20, 0, 9});
    c.set_event(10);
    c.on_trace(TraceEntry{TraceAction::segment_alloc, A + (2 << 20), 20 << 20, 0});
    c.compare(false);
    assert_true(c.report().diverged);
    assert_int_equal(c.report().divergence_event, 9);
    assert_string_equal(c.report().expected->action.c_str(), "segment_free");
    assert_string_equal(c.report().got->action.c_str(), "segment_alloc");
    assert_int_equal(c.report().got->event, 10);
    // Later events do not overwrite the first divergence.
    c.on_real(SegmentRecord{"segment_alloc", A, 4 << 20, 0, 20});
    c.compare(true);
    assert_int_equal(c.report().divergence_event, 9);
}

static void leftovers_diverge_only_at_the_end(void **)
{
    SegmentCheck c;
    c.on_real(SegmentRecord{"segment_alloc", A, 2 << 20, 0, 0});
    c.compare(false); // the alloc that uses it has not been replayed yet
    assert_false(c.report().diverged);
    c.compare(true);
    assert_true(c.report().diverged);
    assert_false(c.report().got.has_value());
    assert_int_equal(c.report().expected->size, 2 << 20);
}

int run_segment_check_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_addresses_are_handed_out_in_order),
        cmocka_unit_test(a_live_simulated_segment_blocks_its_address),
        cmocka_unit_test(reports_the_first_divergence),
        cmocka_unit_test(leftovers_diverge_only_at_the_end),
    };
    return cmocka_run_group_tests_name("segment_check", tests, NULL, NULL);
}
