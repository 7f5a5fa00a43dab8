// test-policy.cpp — the Lua table job_submit.lua loads: exact shape from the brief.
#include "cmocka.hpp"
#include "config.h"
#include "test-list.h"

using namespace xmem::server;

static void renders_brief_example(void **)
{
    Policy p;
    p.partitions.push_back({"debug", GpuTarget{"A100-40GB", 40, 10, 100}});
    std::string lua = policy_render_lua(p, 0);
    assert_contains(lua, "return {\n  version = 1, mode = \"shard\", margin_percent = 10, "
                         "whole_gpu_above_percent = 90,\n");
    assert_contains(lua, "  daemon_uid = 0,  -- uid xmemd runs as");
    assert_contains(lua, "  default = { gpu = \"A100-40GB\", memory_mb = 40960, shards_per_gpu = "
                         "10, mps_per_gpu = 100 },\n");
    assert_contains(lua, "  partitions = {\n    debug = { gpu = \"A100-40GB\", memory_mb = 40960, "
                         "shards_per_gpu = 10, mps_per_gpu = 100 },\n  },\n}\n");
    assert_contains(lua, "decision_ttl_seconds = 600,");
}

static void quotes_non_identifiers_and_rounds(void **)
{
    Policy p;
    p.mode = "mps";
    p.default_target.memory_gb = 79.6;
    p.partitions.push_back({"gpu-big", GpuTarget{"H100-80GB", 80, 4, 50}});
    p.partitions.push_back({"end", GpuTarget{"A", 0.5, 1, 1}});
    p.partitions.push_back({"2x", GpuTarget{"B", 1, 1, 1}});
    std::string lua = policy_render_lua(p, 1234);
    assert_contains(lua, "mode = \"mps\"");
    assert_contains(lua, "daemon_uid = 1234,");
    assert_contains(lua, "memory_mb = 81510,"); // 79.6 * 1024, rounded
    assert_contains(lua, "    [\"gpu-big\"] = { gpu = \"H100-80GB\", memory_mb = 81920,");
    assert_contains(lua, "    [\"end\"] = { gpu = \"A\", memory_mb = 512,"); // Lua keyword
    assert_contains(lua, "    [\"2x\"] = ");
}

static void empty_partitions(void **)
{
    Policy p;
    assert_contains(policy_render_lua(p, 0), "  partitions = {},\n}\n");
}

int test_group_policy(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(renders_brief_example),
                                       cmocka_unit_test(quotes_non_identifiers_and_rounds),
                                       cmocka_unit_test(empty_partitions)};
    return cmocka_run_group_tests_name("policy", tests, nullptr, nullptr);
}
