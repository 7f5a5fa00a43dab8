// test_estimate_stage.cpp — every (stage, event) pair of the estimate request's state machine:
// the legal ones, written out here as the specification, move to the stage and ask for the
// action below; every other pair is refused. Abandon, expire and cancel at each stage included.
#include "cmocka.hpp"
#include "estimate_stage.h"
#include "test-list.h"

#include <cstdio>

using namespace xmem::server;

namespace
{

using S = Stage;
using E = Event;
using A = Action;

constexpr S k_stages[] = {S::received,  S::in_line, S::preparing,  S::following, S::queued,
                          S::profiling, S::signing, S::committing, S::done};
constexpr E k_events[] = {E::wait_in_line,  E::prepare, E::follow, E::queue,
                          E::start_profile, E::sign,    E::commit, E::answered,
                          E::abandon,       E::expire,  E::cancel};

struct Legal {
    S from;
    E event;
    S next;
    A action;
};

// clang-format off
constexpr Legal k_legal[] = {
    // the way forward
    {S::received,   E::wait_in_line,  S::in_line,    A::none},
    {S::in_line,    E::wait_in_line,  S::in_line,    A::none},
    {S::received,   E::prepare,       S::preparing,  A::none},
    {S::in_line,    E::prepare,       S::preparing,  A::none},
    {S::preparing,  E::follow,        S::following,  A::none},
    {S::preparing,  E::queue,         S::queued,     A::none},
    {S::following,  E::queue,         S::queued,     A::none},
    {S::preparing,  E::start_profile, S::profiling,  A::none},
    {S::following,  E::start_profile, S::profiling,  A::none},
    {S::queued,     E::start_profile, S::profiling,  A::none},
    {S::following,  E::sign,          S::signing,    A::none},
    {S::profiling,  E::sign,          S::signing,    A::none},
    {S::received,   E::commit,        S::committing, A::none},
    {S::in_line,    E::commit,        S::committing, A::none},
    {S::preparing,  E::commit,        S::committing, A::none},
    {S::following,  E::commit,        S::committing, A::none},
    {S::queued,     E::commit,        S::committing, A::none},
    {S::profiling,  E::commit,        S::committing, A::none},
    {S::signing,    E::commit,        S::committing, A::none},
    {S::committing, E::answered,      S::done,       A::none},
    // nobody waits any more
    {S::in_line,    E::abandon,       S::in_line,    A::leave_line},
    {S::preparing,  E::abandon,       S::preparing,  A::none},
    {S::following,  E::abandon,       S::following,  A::stop_following},
    {S::queued,     E::abandon,       S::queued,     A::leave_queue},
    {S::profiling,  E::abandon,       S::profiling,  A::kill_profile},
    {S::signing,    E::abandon,       S::signing,    A::none},
    {S::committing, E::abandon,       S::committing, A::none},
    // the deadline passed: only waiting for a leader or a slot ends
    {S::in_line,    E::expire,        S::in_line,    A::none},
    {S::preparing,  E::expire,        S::preparing,  A::none},
    {S::following,  E::expire,        S::following,  A::stop_following},
    {S::queued,     E::expire,        S::queued,     A::leave_queue},
    {S::profiling,  E::expire,        S::profiling,  A::none},
    {S::signing,    E::expire,        S::signing,    A::none},
    {S::committing, E::expire,        S::committing, A::none},
    // xmemd stops its running profiles
    {S::in_line,    E::cancel,        S::in_line,    A::none},
    {S::preparing,  E::cancel,        S::preparing,  A::none},
    {S::following,  E::cancel,        S::following,  A::none},
    {S::queued,     E::cancel,        S::queued,     A::none},
    {S::profiling,  E::cancel,        S::profiling,  A::kill_profile},
    {S::signing,    E::cancel,        S::signing,    A::none},
    {S::committing, E::cancel,        S::committing, A::none},
};
// clang-format on

const Legal *legal(S s, E e)
{
    for (const Legal &l : k_legal)
        if (l.from == s && l.event == e)
            return &l;
    return nullptr;
}

void every_pair(void **)
{
    int checked = 0, refused = 0;
    for (S s : k_stages) {
        for (E e : k_events) {
            auto step = estimate_step(s, e);
            const Legal *want = legal(s, e);
            if (!want) {
                if (step)
                    fail_msg("%s at %s: refused in the table, allowed as %s", event_name(e),
                             stage_name(s), stage_name(step->next));
                refused++;
            } else {
                if (!step)
                    fail_msg("%s at %s: refused", event_name(e), stage_name(s));
                if (step->next != want->next || step->action != want->action)
                    fail_msg("%s at %s: went to %s (action %d), not %s (action %d)", event_name(e),
                             stage_name(s), stage_name(step->next), (int)step->action,
                             stage_name(want->next), (int)want->action);
            }
            checked++;
        }
    }
    assert_int_equal(checked, 9 * 11);
    assert_int_equal(refused, 9 * 11 - (int)(sizeof(k_legal) / sizeof(k_legal[0])));
}

// Once done, a job takes no event; a live job is recorded once.
void nothing_after_done(void **)
{
    for (E e : k_events)
        assert_false(estimate_step(S::done, e).has_value());
    assert_false(estimate_step(S::committing, E::commit).has_value());
    assert_false(estimate_step(S::received, E::abandon).has_value());
}

// Every stage can end: commit (or answered) reaches done from anywhere live.
void every_stage_ends(void **)
{
    for (S s : k_stages) {
        S at = s;
        for (int hop = 0; hop < 2 && at != S::done; hop++) {
            auto step = estimate_step(at, at == S::committing ? E::answered : E::commit);
            assert_true(step.has_value());
            at = step->next;
        }
        assert_int_equal((int)at, (int)S::done);
    }
}

// A table with a pair twice would hide one of them.
void table_has_no_repeats(void **)
{
    for (const Legal &a : k_legal) {
        int n = 0;
        for (const Legal &b : k_legal)
            n += a.from == b.from && a.event == b.event;
        assert_int_equal(n, 1);
    }
}

// The names are distinct, so a refusal in the log says which pair it was.
void names_distinct(void **)
{
    for (S a : k_stages)
        for (S b : k_stages)
            if (a != b)
                assert_string_not_equal(stage_name(a), stage_name(b));
    for (E a : k_events)
        for (E b : k_events)
            if (a != b)
                assert_string_not_equal(event_name(a), event_name(b));
}

} // namespace

int test_group_estimate_stage(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_pair), cmocka_unit_test(nothing_after_done),
        cmocka_unit_test(every_stage_ends), cmocka_unit_test(table_has_no_repeats),
        cmocka_unit_test(names_distinct)};
    return cmocka_run_group_tests_name("estimate_stage", tests, nullptr, nullptr);
}
