// Trace observer and segment address source (allocator.md 13.3, 13.5).
#include "sim_helpers.h"

using namespace simtest;

static void action_names_match_pytorch(void **)
{
    EXPECT_STR(to_string(TraceAction::alloc), "alloc");
    EXPECT_STR(to_string(TraceAction::free_requested), "free_requested");
    EXPECT_STR(to_string(TraceAction::free_completed), "free_completed");
    EXPECT_STR(to_string(TraceAction::segment_alloc), "segment_alloc");
    EXPECT_STR(to_string(TraceAction::segment_free), "segment_free");
    EXPECT_STR(to_string(TraceAction::segment_map), "segment_map");
    EXPECT_STR(to_string(TraceAction::segment_unmap), "segment_unmap");
    EXPECT_STR(to_string(TraceAction::oom), "oom");
}

// allocator.md 13.3: alloc/free carry the requested bytes; segment entries the segment bytes; oom
// the free device bytes and the rounded size.
static void entries_carry_spec_sizes(void **)
{
    auto a = make("2.6", "", 30 * MiB);
    Recorder rec;
    a->set_observer(&rec);
    const uint64_t p = must_malloc(*a, 5 * MiB + 100, 3);
    must_free(*a, p);
    a->empty_cache();
    a->set_observer(nullptr);
    must_malloc(*a, 16 * MiB);
    a->set_observer(&rec);
    assert_false(a->malloc(5 * MiB + 100).ok);
    EXPECT_STR(rec.actions(), "segment_alloc alloc free_requested free_completed segment_free oom");
    EXPECT_U64(rec.entries[0].size, 20 * MiB);
    EXPECT_U64(rec.entries[1].size, 5 * MiB + 100);
    EXPECT_U64(rec.entries[1].stream, 3);
    EXPECT_U64(rec.entries[2].size, 5 * MiB + 100);
    EXPECT_U64(rec.entries[4].addr, p);
    EXPECT_U64(rec.entries[5].addr, 14 * MiB);      // device free
    EXPECT_U64(rec.entries[5].size, 5 * MiB + 512); // rounded request
}

struct FixedAddresses : SegmentAddressSource {
    uint64_t next = 0x10000000;
    uint64_t next_segment_address(uint64_t size, StreamId) override
    {
        const uint64_t a = next;
        next -= size + 0x1000000; // descending: the verifier decides, not the simulator
        return a;
    }
};

// allocator.md 13.5: with an address source, segments sit where it says, and best fit follows those
// addresses.
static void address_source_decides(void **)
{
    auto a = make("2.6");
    FixedAddresses src;
    a->set_address_source(&src);
    const uint64_t p1 = must_malloc(*a, 15 * MiB + 512); // 16 MiB segment at 0x10000000
    const uint64_t p2 = must_malloc(*a, 15 * MiB + 512); // below it
    EXPECT_U64(p1, 0x10000000);
    EXPECT_U64(p2, 0x10000000 - 16 * MiB - 0x1000000);
    must_free(*a, p1);
    must_free(*a, p2);
    EXPECT_U64(must_malloc(*a, 15 * MiB + 512), p2); // lowest address wins the tie
}

// Synthetic addresses are deterministic and increasing.
static void synthetic_addresses(void **)
{
    auto a = make("2.6");
    auto b = make("2.6");
    const uint64_t p = must_malloc(*a, 4096);
    EXPECT_U64(must_malloc(*b, 4096), p);
    assert_true(must_malloc(*a, 5 * MiB) > p);
}

int run_trace_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(action_names_match_pytorch),
        cmocka_unit_test(entries_carry_spec_sizes),
        cmocka_unit_test(address_source_decides),
        cmocka_unit_test(synthetic_addresses),
    };
    return cmocka_run_group_tests_name("trace", tests, nullptr, nullptr);
}
