// test-policy.cpp — the packing policy: its GPUs resolved against the GPU catalog (the one
// source of GPU memory) when the config loads, and the Lua table job_submit.lua loads.
#include "cmocka.hpp"
#include "config.h"
#include "test-list.h"

#include "analysis/catalog.h"

#include <unistd.h>

using namespace xmem::server;

static std::string write_tmp(const std::string &text)
{
    char path[] = "/tmp/xmemd-test-policy-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text.data(), text.size()), (ssize_t)text.size());
    close(fd);
    return path;
}

// One catalog entry as etc/gpus.yaml writes it: every number with its source.
static std::string gpu_entry(const std::string &name, int memory_mib)
{
    return "  - name: " + name + "\n    aliases: [" + name + "-alias]\n" +
           "    total_memory_mib: " + std::to_string(memory_mib) +
           "\n    compute_capability: \"8.0\"\n    context_mib: 500\n"
           "    cublas_workspace_kib: 8320\n    cublaslt_workspace_kib: 1024\n"
           "    cudnn_context_mib: 250\n    sources:\n"
           "      total_memory_mib: \"a test catalog\"\n"
           "      compute_capability: \"a test catalog\"\n      context_mib: \"a test catalog\"\n"
           "      cublas_workspace_kib: \"a test catalog\"\n"
           "      cublaslt_workspace_kib: \"a test catalog\"\n"
           "      cudnn_context_mib: \"a test catalog\"\n";
}

// A two-GPU catalog in a temporary file; A100-40GB has `a100_mib`.
static std::string write_catalog(int a100_mib = 40536)
{
    return write_tmp("version: 1\ngpus:\n" + gpu_entry("A100-40GB", a100_mib) +
                     gpu_entry("H100-80GB", 81559));
}

struct Loaded {
    xmem::Result<Config> config;
    std::string config_path;
};

// Loads `policy_lines` (the lines after `catalog: CATALOG`, which is line 1) as xmem.yaml.
static Loaded load_with(const std::string &catalog, const std::string &policy_lines)
{
    std::string path = write_tmp("catalog: " + catalog + "\n" + policy_lines);
    Loaded l{config_load(path), path};
    unlink(path.c_str());
    return l;
}

static void renders_brief_example(void **)
{
    Policy p;
    p.default_target.memory_mib = 40536;
    p.partitions.push_back({"debug", GpuTarget{"A100-40GB", 10, 100, 40536, 0, {}}});
    std::string lua = policy_render_lua(p, 0);
    assert_contains(lua, "return {\n  version = 1, mode = \"shard\", margin_percent = 10, "
                         "whole_gpu_above_percent = 90,\n");
    assert_contains(lua, "  daemon_uid = 0,  -- uid xmemd runs as");
    assert_contains(lua, "  default = { gpu = \"A100-40GB\", memory_mb = 40536, shards_per_gpu = "
                         "10, mps_per_gpu = 100, enforcement = \"client\" },\n");
    assert_contains(lua, "  partitions = {\n    debug = { gpu = \"A100-40GB\", memory_mb = 40536, "
                         "shards_per_gpu = 10, mps_per_gpu = 100, enforcement = \"client\" },\n"
                         "  },\n}\n");
    assert_contains(lua, "decision_ttl_seconds = 600,");
}

// whole_as_shares: on by default (not rendered, the Lua's default), off per target for a
// partition whose nodes have no shares; inherited from default; strict like every key.
static void whole_as_shares_option(void **)
{
    std::string catalog = write_catalog();
    auto l =
        load_with(catalog, "policy:\n  default: {whole_as_shares: false}\n"
                           "  partitions:\n    packs: {whole_as_shares: true}\n    same: {}\n");
    if (!l.config)
        fail_msg("%s", l.config.error().message.c_str());
    const Policy &p = l.config.value().policy;
    assert_false(p.default_target.whole_as_shares);
    assert_true(policy_target(p, "packs").whole_as_shares);
    assert_false(policy_target(p, "same").whole_as_shares); // inherited
    std::string lua = policy_render_lua(p, 0);
    assert_contains(lua, "enforcement = \"client\", whole_as_shares = false },\n  partitions");
    assert_contains(lua, "packs = { gpu = \"A100-40GB\", memory_mb = 40536, shards_per_gpu = 10, "
                         "mps_per_gpu = 100, enforcement = \"client\" },");
    l = load_with(catalog, "policy:\n  default: {whole_as_shares: sometimes}\n");
    unlink(catalog.c_str());
    if (l.config)
        fail_msg("whole_as_shares: sometimes was accepted");
    assert_contains(l.config.error().message, "whole_as_shares");
}

static void quotes_non_identifiers(void **)
{
    Policy p;
    p.mode = "mps";
    p.default_target.memory_mib = 81510;
    p.partitions.push_back({"gpu-big", GpuTarget{"H100-80GB", 4, 50, 81559, 0, {}}});
    p.partitions.push_back({"end", GpuTarget{"A", 1, 1, 512, 0, {}}});
    p.partitions.push_back({"2x", GpuTarget{"B", 1, 1, 1024, 0, {}}});
    std::string lua = policy_render_lua(p, 1234);
    assert_contains(lua, "mode = \"mps\"");
    assert_contains(lua, "daemon_uid = 1234,");
    assert_contains(lua, "memory_mb = 81510,");
    assert_contains(lua, "    [\"gpu-big\"] = { gpu = \"H100-80GB\", memory_mb = 81559,");
    assert_contains(lua, "    [\"end\"] = { gpu = \"A\", memory_mb = 512,"); // Lua keyword
    assert_contains(lua, "    [\"2x\"] = ");
}

static void empty_partitions(void **)
{
    Policy p;
    assert_contains(policy_render_lua(p, 0), "  partitions = {},\n}\n");
}

// The rendered memory is the catalog's: change the catalog, the policy follows.
static void memory_comes_from_the_catalog(void **)
{
    std::string catalog = write_catalog(12345);
    auto l = load_with(catalog, "policy:\n  default: {gpu: a100-40gb-alias, shards_per_gpu: 5}\n"
                                "  partitions:\n    big: {gpu: H100-80GB}\n    same: {}\n");
    unlink(catalog.c_str());
    if (!l.config)
        fail_msg("%s", l.config.error().message.c_str());
    const Config &c = l.config.value();
    assert_string_equal(c.catalog.c_str(), catalog.c_str());
    assert_int_equal(c.policy.default_target.memory_mib, 12345);
    assert_int_equal(policy_target(c.policy, "big").memory_mib, 81559);
    assert_int_equal(policy_target(c.policy, "same").memory_mib, 12345); // inherits the GPU
    assert_int_equal(policy_gpu_bytes(c.policy, "H100-80GB"), 81559ULL << 20);
    std::string lua = policy_render_lua(c.policy, 0);
    assert_contains(lua, "default = { gpu = \"a100-40gb-alias\", memory_mb = 12345, "
                         "shards_per_gpu = 5,");
    assert_contains(lua, "big = { gpu = \"H100-80GB\", memory_mb = 81559, shards_per_gpu = 5,");
}

// The required level and each partition's, strict like every key; the levels in the Lua come
// from enforcement.h, never from a copy.
static void enforcement_levels(void **)
{
    std::string catalog = write_catalog();
    auto l = load_with(catalog, "policy:\n  require_enforcement: mps-server\n"
                                "  default: {enforcement: dmem}\n"
                                "  partitions:\n    old: {enforcement: none}\n    same: {}\n");
    if (!l.config)
        fail_msg("%s", l.config.error().message.c_str());
    const Policy &p = l.config.value().policy;
    assert_int_equal(p.require_enforcement, XMEM_ENFORCE_MPS_SERVER);
    assert_int_equal(policy_target(p, "old").enforcement, XMEM_ENFORCE_NONE);
    assert_int_equal(policy_target(p, "same").enforcement, XMEM_ENFORCE_DMEM); // inherited
    std::string lua = policy_render_lua(p, 0);
    assert_contains(lua,
                    "  enforcement_levels = { \"none\", \"client\", \"mps-server\", \"dmem\" },");
    assert_contains(lua, "  require_enforcement = \"mps-server\",\n");
    assert_contains(lua, "old = { gpu = \"A100-40GB\", memory_mb = 40536, shards_per_gpu = 10, "
                         "mps_per_gpu = 100, enforcement = \"none\" },");
    l = load_with(catalog, "policy:\n  require_enforcement: hard\n");
    assert_false((bool)l.config);
    assert_string_equal(l.config.error().message.c_str(),
                        (l.config_path + ":3: policy.require_enforcement: invalid value: hard; use "
                                         "none, client, mps-server or dmem")
                            .c_str());
    l = load_with(catalog, "policy:\n  partitions:\n    p:\n      enforcement: MPS\n");
    assert_false((bool)l.config);
    assert_contains(l.config.error().message,
                    l.config_path + ":5: policy.partitions.p.enforcement: invalid value: MPS");
    assert_int_equal(Policy().require_enforcement, XMEM_ENFORCE_NONE);
    assert_int_equal(Policy().default_target.enforcement, XMEM_ENFORCE_CLIENT);
    unlink(catalog.c_str());
}

static void unknown_policy_gpu_is_refused(void **)
{
    std::string catalog = write_catalog();
    auto l = load_with(catalog, "policy:\n  default: {gpu: B200}\n");
    assert_false((bool)l.config);
    assert_string_equal(l.config.error().message.c_str(),
                        (l.config_path +
                         ":3: policy.default.gpu: unknown GPU 'B200'; the catalog (" + catalog +
                         ") has: A100-40GB, H100-80GB")
                            .c_str());
    l = load_with(catalog, "policy:\n  partitions:\n    p: {shards_per_gpu: 2}\n"
                           "    big:\n      gpu: V100\n");
    assert_false((bool)l.config);
    assert_contains(l.config.error().message,
                    l.config_path + ":6: policy.partitions.big.gpu: unknown GPU 'V100';");
    unlink(catalog.c_str());
}

static void disagreeing_memory_gb_is_refused(void **)
{
    std::string catalog = write_catalog();
    auto l = load_with(catalog, "policy:\n  default: {gpu: A100-40GB, memory_gb: 80}\n");
    assert_false((bool)l.config);
    assert_string_equal(l.config.error().message.c_str(),
                        (l.config_path +
                         ":3: policy.default.memory_gb: 80 disagrees with the catalog: A100-40GB "
                         "has 40536 MiB (39.6 GiB) in the GPU catalog (" +
                         catalog +
                         "); delete memory_gb (the catalog is the only source of GPU memory) or "
                         "correct the catalog")
                            .c_str());
    // A partition naming another GPU does not inherit the default's memory_gb.
    l = load_with(catalog, "policy:\n  default: {gpu: A100-40GB, memory_gb: 40}\n"
                           "  partitions:\n    big: {gpu: H100-80GB}\n"
                           "    bad: {gpu: H100-80GB, memory_gb: 40}\n");
    assert_false((bool)l.config);
    assert_contains(l.config.error().message, l.config_path +
                                                  ":6: policy.partitions.bad.memory_gb: 40 "
                                                  "disagrees with the catalog: H100-80GB");
    unlink(catalog.c_str());
}

// An older xmem.yaml's memory_gb that agrees is accepted, with a deprecation warning.
static void agreeing_memory_gb_is_deprecated(void **)
{
    std::string text = "version: 1\ngpus:\n" + gpu_entry("A100-40GB", 40536);
    auto catalog = xmem::analysis::Catalog::parse(text, "gpus.yaml");
    assert_true(catalog.ok());
    Policy p;
    p.default_target.stated_memory_gb = 40;
    p.default_target.lines.memory_gb = 7;
    auto warnings = policy_resolve(p, catalog.value(), "x.yaml");
    assert_true(warnings.ok());
    assert_int_equal(warnings.value().size(), 1);
    assert_string_equal(warnings.value()[0].c_str(),
                        "x.yaml:7: policy.default.memory_gb: deprecated: A100-40GB has 40536 MiB "
                        "(39.6 GiB) in the GPU catalog (gpus.yaml), and that is what is used; "
                        "delete the key");
    assert_int_equal(p.default_target.memory_mib, 40536);
}

// Without a config file xmemd still resolves its built-in default GPU from the catalog.
static void built_in_default_is_resolved(void **)
{
    std::string catalog = write_catalog(40000);
    Config c = config_defaults();
    c.catalog = catalog;
    auto r = config_read_catalog(c);
    unlink(catalog.c_str());
    assert_true(r.ok());
    assert_string_equal(c.policy.default_target.gpu.c_str(), XMEM_DEFAULT_GPU);
    assert_int_equal(c.policy.default_target.memory_mib, 40000);
}

static void missing_or_broken_catalog(void **)
{
    auto l = load_with("/nonexistent/gpus.yaml", "");
    assert_false((bool)l.config);
    assert_string_equal(l.config.error().message.c_str(),
                        (l.config_path + ":1: catalog: no such file: /nonexistent/gpus.yaml; "
                                         "give the path of the GPU catalog, gpus.yaml")
                            .c_str());
    std::string broken = write_tmp("version: 1\ngpus:\n  - name: X\n");
    l = load_with(broken, "");
    unlink(broken.c_str());
    assert_false((bool)l.config);
    assert_contains(l.config.error().message, l.config_path + ": catalog: " + broken + ":3: ");
}

int test_group_policy(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(renders_brief_example),
                                       cmocka_unit_test(enforcement_levels),
                                       cmocka_unit_test(whole_as_shares_option),
                                       cmocka_unit_test(quotes_non_identifiers),
                                       cmocka_unit_test(empty_partitions),
                                       cmocka_unit_test(memory_comes_from_the_catalog),
                                       cmocka_unit_test(unknown_policy_gpu_is_refused),
                                       cmocka_unit_test(disagreeing_memory_gb_is_refused),
                                       cmocka_unit_test(agreeing_memory_gb_is_deprecated),
                                       cmocka_unit_test(built_in_default_is_resolved),
                                       cmocka_unit_test(missing_or_broken_catalog)};
    return cmocka_run_group_tests_name("policy", tests, nullptr, nullptr);
}
