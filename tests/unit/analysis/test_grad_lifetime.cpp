// grad_lifetime: a 1.13 capture (zero_grad keeps gradients) rewritten to 2.x semantics
// (zero_grad frees them, the next backward's buffers become the new gradients).
#include "analysis/grad_lifetime.h"

#include "est_helpers.h"

using namespace esttest;

namespace
{

// Weight 4000 B and bias 400 B; zero_grad at the start of each iteration, as most scripts.
Builder two_iterations(const std::string &set_to_none)
{
    Builder b;
    b.meta("torch", "1.13.1");
    if (!set_to_none.empty())
        b.meta("zero_grad_set_to_none", set_to_none);
    b.phase(Phase::setup).alloc(1, 4000, "|aten::empty").alloc(2, 400, "|aten::empty");
    b.iteration(1)
        .phase(Phase::zero_grad)
        .phase(Phase::forward)
        .alloc(3, 1000, "fc|aten::linear>aten::addmm");
    b.phase(Phase::backward).alloc(4, 4000, "|mm").alloc(5, 400, "|sum").free(3);
    b.phase(Phase::optimizer);
    b.iteration(2)
        .phase(Phase::zero_grad)
        .phase(Phase::forward)
        .alloc(6, 1000, "fc|aten::linear>aten::addmm");
    b.phase(Phase::backward).alloc(7, 4000, "|mm").alloc(8, 400, "|sum").free(7).free(8).free(6);
    b.phase(Phase::optimizer);
    return b;
}

} // namespace

static void kept_gradients_become_set_to_none(void **)
{
    Workload w = two_iterations("0").build();
    GradStats s = apply_target_zero_grad(w, {2, 1});
    assert_true(s.applied);
    EXPECT_U64(s.gradients, 2);
    EXPECT_U64(s.gradient_bytes, 4400);
    EXPECT_U64(s.promoted, 2);
    // Gradients get fresh ids 9, 10 (iteration 1) and 11, 12 (iteration 2, the buffers whose
    // captured frees are dropped); the iteration-2 zero_grad frees 9 and 10.
    EXPECT_STR(summary(w), "A1:4000 A2:400 A3:1000 A9:4000 A10:400 F3 F9 F10 A6:1000 A11:4000 "
                           "A12:400 F6");
}

static void a_1x_capture_without_the_flag_counts_as_keeping(void **)
{
    Workload w = two_iterations("").build();
    assert_true(apply_target_zero_grad(w, {2, 6}).applied);
}

static void nothing_to_do_when_semantics_already_match(void **)
{
    Workload w = two_iterations("1").build();
    std::string before = summary(w);
    GradStats s = apply_target_zero_grad(w, {2, 1});
    assert_false(s.applied);
    EXPECT_CONTAINS(s.reason, "already");
    EXPECT_STR(summary(w), before);

    Workload old = two_iterations("0").build();
    assert_false(apply_target_zero_grad(old, {1, 13}).applied); // target keeps gradients too
    EXPECT_STR(summary(old), before);
}

static void without_zero_grad_the_capture_is_kept(void **)
{
    Builder b;
    b.meta("torch", "1.13.1").meta("zero_grad_set_to_none", "0");
    b.iteration(1).phase(Phase::backward).alloc(1, 4000, "|mm").phase(Phase::optimizer);
    Workload w = b.build();
    GradStats s = apply_target_zero_grad(w, {2, 1});
    assert_false(s.applied);
    EXPECT_CONTAINS(s.reason, "no zero_grad");
}

static void survivors_are_the_gradients_in_allocation_order(void **)
{
    Workload w = two_iterations("0").build();
    std::vector<size_t> idx = backward_survivors(w, 2);
    EXPECT_U64(idx.size(), 0); // iteration 2 accumulated in place: no new survivors
    idx = backward_survivors(w, 1);
    EXPECT_U64(idx.size(), 2);
    EXPECT_U64(w.events[idx[0]].id, 4);
    EXPECT_U64(w.events[idx[1]].id, 5);
}

int run_grad_lifetime_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kept_gradients_become_set_to_none),
        cmocka_unit_test(a_1x_capture_without_the_flag_counts_as_keeping),
        cmocka_unit_test(nothing_to_do_when_semantics_already_match),
        cmocka_unit_test(without_zero_grad_the_capture_is_kept),
        cmocka_unit_test(survivors_are_the_gradients_in_allocation_order),
    };
    return cmocka_run_group_tests_name("grad_lifetime", tests, nullptr, nullptr);
}
