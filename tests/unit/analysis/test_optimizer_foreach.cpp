// optimizer_foreach: a 1.13 per-parameter optimizer loop becomes 2.x's multi-tensor step,
// whose temporaries are whole parameter-sized lists alive until the step ends.
#include "analysis/optimizer_foreach.h"

#include "est_helpers.h"

using namespace esttest;

namespace
{

// Two parameters (4000 B, 400 B) with gradients; one Adam-like step with temporaries.
Builder one_step(const std::string &optimizer, bool weight_decay,
                 const std::string &torch = "1.13.1")
{
    const std::string step = "|Optimizer.step#" + optimizer + ".step";
    Builder b;
    b.meta("torch", torch);
    b.phase(Phase::setup).alloc(1, 4000).alloc(2, 400);
    b.iteration(1).phase(Phase::forward).alloc(3, 1000, "fc|aten::linear>aten::addmm");
    b.phase(Phase::backward).alloc(4, 4000, "|mm").alloc(5, 400, "|sum").free(3);
    b.phase(Phase::optimizer);
    b.alloc(6, 8, step);                          // step counter: not a temporary (<= 8 B)
    b.alloc(7, 4000, step + ">aten::zeros_like"); // state: outlives the step
    uint64_t id = 8;
    for (uint64_t bytes : {4000u, 400u}) {
        if (weight_decay) {
            b.alloc(id, bytes, step + ">aten::add").free(id);
            ++id;
        }
        b.alloc(id, bytes, step + ">aten::sqrt").alloc(id + 1, bytes, step + ">aten::div");
        b.free(id).free(id + 1);
        id += 2;
    }
    b.free(6).phase(Phase::zero_grad);
    return b;
}

} // namespace

static void adam_gets_one_list(void **)
{
    Workload w = one_step("Adam", false).build();
    ForeachStats s = apply_target_foreach(w, {2, 1});
    assert_true(s.applied);
    EXPECT_STR(s.optimizer, "Adam");
    EXPECT_U64(s.lists, 1);
    EXPECT_U64(s.list_bytes, 4400);
    EXPECT_U64(s.temporaries_replaced, 4);
    // Fresh ids continue after the largest captured id (11): the list is 12, 13.
    EXPECT_STR(summary(w), "A1:4000 A2:400 A3:1000 A4:4000 A5:400 F3 A6:8 A7:4000 A12:4000 "
                           "A13:400 F6 F12 F13");
}

static void weight_decay_adds_a_list_except_for_adamw(void **)
{
    Workload w = one_step("Adam", true).build();
    EXPECT_U64(apply_target_foreach(w, {2, 1}).lists, 2);
    EXPECT_U64(bytes_with_ctx(w, "xmem|foreach"), 8800);
    Workload adamw = one_step("AdamW", true).build();
    EXPECT_U64(apply_target_foreach(adamw, {2, 1}).lists, 1);
    Workload adagrad = one_step("Adagrad", false).build();
    EXPECT_U64(apply_target_foreach(adagrad, {2, 1}).lists, 2);
}

static void plain_sgd_only_loses_its_loop_temporaries(void **)
{
    Workload w = one_step("SGD", false).build();
    ForeachStats s = apply_target_foreach(w, {2, 1});
    assert_true(s.applied);
    EXPECT_U64(s.lists, 0);
    EXPECT_STR(summary(w), "A1:4000 A2:400 A3:1000 A4:4000 A5:400 F3 A6:8 A7:4000 F6");
}

static void left_alone_when_not_applicable(void **)
{
    for (auto [opt, torch, target] :
         {std::tuple{"Adam", "2.1.0", xmem::sim::TorchVersion{2, 1}},
          std::tuple{"Adam", "1.13.1", xmem::sim::TorchVersion{1, 13}},
          std::tuple{"Lion", "1.13.1", xmem::sim::TorchVersion{2, 1}}}) {
        Workload w = one_step(opt, false, torch).build();
        std::string before = summary(w);
        assert_false(apply_target_foreach(w, target).applied);
        EXPECT_STR(summary(w), before);
    }
}

static void class_name_comes_from_the_step_range(void **)
{
    EXPECT_STR(optimizer_class("|Optimizer.step#AdamW.step>aten::mul_"), "AdamW");
    EXPECT_STR(optimizer_class("fc|aten::linear"), "");
}

int run_optimizer_foreach_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adam_gets_one_list),
        cmocka_unit_test(weight_decay_adds_a_list_except_for_adamw),
        cmocka_unit_test(plain_sgd_only_loses_its_loop_temporaries),
        cmocka_unit_test(left_alone_when_not_applicable),
        cmocka_unit_test(class_name_comes_from_the_step_range),
    };
    return cmocka_run_group_tests_name("optimizer_foreach", tests, nullptr, nullptr);
}
