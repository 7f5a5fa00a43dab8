// categorize: what each storage is, from when it was made and how long it lived.
#include "analysis/categorize.h"

#include "est_helpers.h"

using namespace esttest;

static void lifetimes_name_the_storage(void **)
{
    Builder b;
    b.phase(Phase::setup).alloc(1, 4000).alloc(2, 64).free(2); // weight, set-up scratch
    b.iteration(1).phase(Phase::data).alloc(3, 3072);          // batch
    b.phase(Phase::forward).alloc(4, 1000);                    // activation
    b.phase(Phase::backward).alloc(5, 4000).alloc(6, 1000).free(6).free(4); // gradient, temporary
    b.phase(Phase::optimizer).alloc(7, 4000).alloc(8, 4000).free(8);        // state, temporary
    b.alloc(9, 8519680, "xmem|cublas_workspace");
    b.alloc(10, 4000, "xmem|foreach_temporaries|Adam").free(10);
    b.phase(Phase::zero_grad).free(5); // set_to_none after step
    b.iteration(2).free(3);
    Workload w = b.build();
    std::vector<Category> c = categorize(w);
    auto of = [&](uint64_t id) {
        for (size_t i = 0; i < w.events.size(); ++i)
            if (w.events[i].kind == EventKind::alloc && w.events[i].id == id)
                return std::string(category_name(c[i]));
        return std::string("?");
    };
    EXPECT_STR(of(1), "weights");
    EXPECT_STR(of(2), "other");
    EXPECT_STR(of(3), "inputs");
    EXPECT_STR(of(4), "activations");
    EXPECT_STR(of(5), "gradients");
    EXPECT_STR(of(6), "activations");
    EXPECT_STR(of(7), "optimizer_state");
    EXPECT_STR(of(8), "other");
    EXPECT_STR(of(9), "workspaces");
    EXPECT_STR(of(10), "other");
}

int run_categorize_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lifetimes_name_the_storage),
    };
    return cmocka_run_group_tests_name("categorize", tests, nullptr, nullptr);
}
