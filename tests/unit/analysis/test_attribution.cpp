// attribution: who holds the live bytes when allocated bytes peak, by module and by op
// (simulator/analysis/attribution.h), through the estimate's replay.
#include "analysis/replay.h"

#include "est_helpers.h"

using namespace esttest;

namespace
{

xmem::sim::AllocatorConfig config()
{
    return xmem::sim::AllocatorConfig::defaults({2, 1});
}

// One layer far larger than the rest; a transient larger than it but freed before the
// peak; gradients made outside any module; a block xmem inserted.
Workload one_huge_layer()
{
    Builder b;
    b.phase(Phase::setup).alloc(1, 2 * MiB, "|aten::empty_strided");
    b.iteration(1).phase(Phase::forward);
    b.alloc(2, 50 * MiB, "scratch|aten::empty").free(2);
    b.alloc(3, 3 * MiB, "net.small|aten::linear>aten::addmm");
    b.alloc(4, 40 * MiB, "net.huge|aten::linear>aten::addmm");
    b.alloc(5, 24 * MiB, "net.huge|aten::relu");
    b.alloc(6, 8 * MiB, "xmem|cublas_workspace");
    b.phase(Phase::backward).alloc(7, 5 * MiB, "|aten::mm").free(4).free(5).free(3);
    return b.build();
}

const Share *find(const Ranking &r, const std::string &name)
{
    for (const Share &s : r.top)
        if (s.name == name)
            return &s;
    return nullptr;
}

} // namespace

static void the_huge_layer_comes_first_with_its_bytes(void **)
{
    auto r = replay(one_huge_layer(), config(), nullptr);
    assert_true(r.ok());
    const Attribution &a = r.value().attribution;
    assert_true(!a.modules.top.empty());
    EXPECT_STR(a.modules.top[0].name, "net.huge");
    EXPECT_U64(a.modules.top[0].bytes, 64 * MiB);
    const Share *small = find(a.modules, "net.small");
    assert_non_null(small);
    EXPECT_U64(small->bytes, 3 * MiB);
    assert_null(find(a.modules, "scratch")); // freed before the peak
}

static void storages_outside_modules_group_by_category(void **)
{
    auto r = replay(one_huge_layer(), config(), nullptr);
    assert_true(r.ok());
    const Attribution &a = r.value().attribution;
    const Share *weights = find(a.modules, "(weights, no module)");
    assert_non_null(weights);
    EXPECT_U64(weights->bytes, 2 * MiB);
    const Share *gradients = find(a.modules, "(gradients, no module)");
    assert_non_null(gradients);
    EXPECT_U64(gradients->bytes, 5 * MiB);
    const Share *inserted = find(a.modules, "(inserted by xmem)");
    assert_non_null(inserted);
    EXPECT_U64(inserted->bytes, 8 * MiB);
}

static void ops_are_the_innermost_and_the_sums_agree(void **)
{
    auto r = replay(one_huge_layer(), config(), nullptr);
    assert_true(r.ok());
    const ReplayResult &res = r.value();
    const Share *addmm = find(res.attribution.ops, "aten::addmm");
    assert_non_null(addmm);
    EXPECT_U64(addmm->bytes, 43 * MiB);
    uint64_t by_module = res.attribution.modules.rest_bytes, by_op = res.attribution.ops.rest_bytes,
             by_category = 0;
    for (const Share &s : res.attribution.modules.top)
        by_module += s.bytes;
    for (const Share &s : res.attribution.ops.top)
        by_op += s.bytes;
    for (uint64_t b : res.live_at_peak)
        by_category += b;
    EXPECT_U64(by_module, by_category);
    EXPECT_U64(by_op, by_category);
}

static void only_the_top_are_named(void **)
{
    Builder b;
    b.iteration(1).phase(Phase::forward);
    for (uint64_t i = 1; i <= k_attribution_top + 3; ++i)
        b.alloc(i, i * MiB, "layer" + std::to_string(i) + "|aten::relu");
    auto r = replay(b.build(), config(), nullptr);
    assert_true(r.ok());
    const Ranking &m = r.value().attribution.modules;
    EXPECT_U64(m.top.size(), k_attribution_top);
    EXPECT_STR(m.top[0].name, "layer" + std::to_string(k_attribution_top + 3));
    EXPECT_U64(m.rest_count, 3);
    EXPECT_U64(m.rest_bytes, (1 + 2 + 3) * MiB);
}

int run_attribution_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_huge_layer_comes_first_with_its_bytes),
        cmocka_unit_test(storages_outside_modules_group_by_category),
        cmocka_unit_test(ops_are_the_innermost_and_the_sums_agree),
        cmocka_unit_test(only_the_top_are_named),
    };
    return cmocka_run_group_tests_name("attribution", tests, nullptr, nullptr);
}
