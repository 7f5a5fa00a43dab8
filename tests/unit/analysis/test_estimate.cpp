// estimate: every pass in order on a small 1.13 Adam capture, checked against sizes worked
// out by hand from allocator.md 4 and 12, and the JSON the CLI prints.
#include "analysis/estimate.h"
#include "analysis/report.h"

#include <nlohmann/json.hpp> // before CMocka's fail() macro

#include "est_helpers.h"

using namespace esttest;

namespace
{

const std::string k_step = "|Optimizer.step#Adam.step";

Workload adam_capture()
{
    Builder b;
    b.meta("torch", "1.13.1").meta("zero_grad_set_to_none", "0").meta("amp", "off");
    b.phase(Phase::setup)
        .alloc(1, 40000, "|aten::to>aten::empty_strided")
        .alloc(2, 400, "|aten::to>aten::empty_strided");
    b.iteration(1)
        .phase(Phase::zero_grad)
        .phase(Phase::data)
        .alloc(3, 3072, "|aten::to>aten::empty_strided");
    b.phase(Phase::forward).alloc(4, 1000, "fc|aten::linear>aten::addmm");
    b.alloc(5, 4, "CrossEntropyLoss|aten::cross_entropy_loss>aten::nll_loss_forward");
    b.phase(Phase::backward)
        .alloc(6, 40000, "|autograd::engine::evaluate_function: AddmmBackward0>aten::mm");
    b.alloc(7, 400, "|autograd::engine::evaluate_function: AddmmBackward0>aten::sum")
        .free(5)
        .free(4);
    b.phase(Phase::optimizer).alloc(8, 8, k_step);
    b.alloc(9, 40000, k_step + ">aten::zeros_like").alloc(10, 40000, k_step + ">aten::zeros_like");
    b.alloc(11, 400, k_step + ">aten::zeros_like").alloc(12, 400, k_step + ">aten::zeros_like");
    b.alloc(13, 40000, k_step + ">aten::sqrt")
        .free(13)
        .alloc(14, 400, k_step + ">aten::sqrt")
        .free(14);
    b.free(8);
    return b.build();
}

Target a100()
{
    Target t;
    t.gpu.name = "A100-40GB";
    t.gpu.total_bytes = 40536 * MiB;
    t.gpu.cc_major = 8;
    t.gpu.context_bytes = 1000 * MiB;
    t.gpu.cublas_workspace_bytes = 8320 * KiB;
    t.gpu.cublaslt_workspace_bytes = 1 * MiB;
    t.torch = {2, 1};
    t.margin = 0.05;
    return t;
}

} // namespace

static void small_adam_job_end_to_end(void **)
{
    auto r = analyze(adam_capture(), a100(), nullptr);
    assert_true(r.ok());
    const Estimate &e = r.value();
    // Small pool: one 2 MiB segment for every tensor and the 1 MiB cuBLASLt workspace;
    // large pool: one 20 MiB segment holding both 8.125 MiB cuBLAS workspaces.
    EXPECT_U64(e.replay.reserved_peak, 22 * MiB);
    // At the end of the step: 5 blocks of 40448 B, 5 of 512 B, the 3072 B batch, 2 workspaces.
    EXPECT_U64(e.replay.allocated_peak, 5 * 40448 + 5 * 512 + 3072 + 2 * 8519680);
    EXPECT_U64(e.replay.live_at_peak[static_cast<size_t>(Category::workspaces)], 2 * 8519680);
    EXPECT_U64(e.replay.live_at_peak[static_cast<size_t>(Category::optimizer_state)], 80800);
    EXPECT_U64(e.replay.live_at_peak[static_cast<size_t>(Category::gradients)], 40400);
    EXPECT_U64(e.replay.live_at_peak[static_cast<size_t>(Category::other)], 40400); // foreach list
    EXPECT_U64(e.filter.scalar.count, 1);
    assert_true(e.foreach.applied);
    assert_true(e.grads.applied);
    EXPECT_U64(e.peak_bytes, 1000 * MiB + 22 * MiB);
    EXPECT_U64(e.limit_bytes, 1074 * MiB); // ceil(1022 MiB x 1.05) to a MiB
    assert_true(e.fits);
}

static void json_is_complete_and_consistent(void **)
{
    auto r = analyze(adam_capture(), a100(), nullptr);
    assert_true(r.ok());
    auto j = nlohmann::json::parse(render_json(r.value(), {1.5, 0.01}));
    for (const char *key :
         {"peak_bytes", "limit_bytes", "reserved_peak_bytes", "allocated_peak_bytes",
          "context_bytes", "fits", "breakdown", "gpu", "torch", "iterations", "profile_seconds",
          "analyze_seconds", "mode", "coverage", "workspace_bound_peak_bytes"})
        assert_true(j.contains(key));
    EXPECT_STR(j["mode"].get<std::string>(), "exact");
    EXPECT_STR(j["torch"].get<std::string>(), "2.1");
    uint64_t sum = 0;
    for (auto &[k, v] : j["breakdown"].items())
        sum += v.get<uint64_t>();
    EXPECT_U64(sum, j["peak_bytes"].get<uint64_t>());
    assert_true(j["peak_bytes"].get<uint64_t>() >=
                j["reserved_peak_bytes"].get<uint64_t>() + j["context_bytes"].get<uint64_t>());
    assert_true(j["limit_bytes"].get<uint64_t>() >= j["peak_bytes"].get<uint64_t>());
}

static void a_gpu_too_small_does_not_fit(void **)
{
    Target t = a100();
    t.gpu.total_bytes = 1010 * MiB; // context 1000 MiB leaves 10 MiB: the 20 MiB segment fails
    auto r = analyze(adam_capture(), t, nullptr);
    assert_true(r.ok());
    assert_true(r.value().replay.oom);
    assert_false(r.value().fits);
    assert_true(r.value().limit_bytes >= r.value().peak_bytes);
}

// What the job needs is the replay without a capacity: the large GPU's reserved peak and
// breakdown, with the small GPU's catalog terms; the text prints no limit and cuts no word.
static void a_job_that_does_not_fit_says_what_it_needs(void **)
{
    Target small = a100();
    small.gpu.total_bytes = 1010 * MiB;
    auto r = analyze(adam_capture(), small, nullptr);
    auto large = analyze(adam_capture(), a100(), nullptr);
    assert_true(r.ok() && large.ok());
    const Estimate &e = r.value();
    assert_true(e.replay.oom);
    assert_false(e.fits);
    EXPECT_U64(e.replay.reserved_peak, large.value().replay.reserved_peak);
    EXPECT_U64(e.replay.allocated_peak, large.value().replay.allocated_peak);
    EXPECT_U64(e.peak_bytes, large.value().peak_bytes);
    assert_false(e.replay.oom_message.empty());

    std::string text = render_human(e, {1.5, 0.01});
    assert_true(text.find("recommended limit") == std::string::npos);
    EXPECT_CONTAINS(text, "no GPU of the catalog holds this peak");
    size_t start = 0;
    for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string line = text.substr(start, nl - start);
        if (line.size() > 100 && line.find(' ', line.find_first_not_of(' ')) != std::string::npos) {
            print_error("a line of %zu columns: %s\n", line.size(), line.c_str());
            fail();
        }
    }
    // Every word of the OOM message, in order, in the text with its lines joined.
    auto words = [](const std::string &s) {
        std::string out;
        for (char c : s)
            if ((c != ' ' && c != '\n') || (!out.empty() && out.back() != ' '))
                out += c == '\n' ? ' ' : c;
        return out;
    };
    EXPECT_CONTAINS(words(text), words(e.replay.oom_message));
}

static void the_limit_covers_every_workspace_factor_up_to_the_bound(void **)
{
    // A 3x3 convolution on 1x16x64x64 fp32: input and output 256 KiB each. Point factor 1:
    // a 512 KiB workspace, served from the small pool's 2 MiB segment beside them, as are
    // 768 KiB (1.5) and 1 MiB (2.0); at 2.5 the 1.25 MiB request takes a 20 MiB large-pool
    // segment. The point estimate keeps 2 MiB reserved; the limit covers 22 MiB.
    Builder b;
    b.iteration(1).phase(Phase::data).alloc(1, 262144, "|aten::to>aten::empty_strided");
    b.phase(Phase::forward).alloc(2, 262144, "conv|aten::conv2d>aten::empty");
    Workload w = b.build();
    w.kernels = {"conv conv x=1,16,64,64 w=16,16,3,3 s=1,1 p=1,1 d=1,1 g=1 e=4 t=0"};
    auto r = analyze(std::move(w), a100(), nullptr);
    assert_true(r.ok());
    const Estimate &e = r.value();
    EXPECT_U64(e.replay.reserved_peak, 2 * MiB);
    EXPECT_U64(e.peak_bytes, 1002 * MiB);
    EXPECT_U64(e.workspace_bound_peak_bytes, 1022 * MiB);
    EXPECT_U64(e.limit_bytes, 1074 * MiB); // 1022 MiB x 1.05, rounded up to a MiB
    // Without K records there is nothing to bound: the limit follows the peak.
    Builder plain;
    plain.iteration(1).phase(Phase::forward).alloc(1, 262144, "conv|aten::conv2d>aten::empty");
    auto p = analyze(plain.build(), a100(), nullptr);
    EXPECT_U64(p.value().workspace_bound_peak_bytes, 0);
    EXPECT_U64(p.value().limit_bytes, 1053 * MiB); // 1002 MiB x 1.05 = 1052.1
}

// Issue 17 class 3: a job that never touches the GPU (a forgotten --cuda flag) still "fits",
// but the estimate says it is the CUDA context alone, with a warning line and JSON fields.
static void a_job_without_gpu_tensors_is_warned_about(void **)
{
    Builder b;
    b.meta("torch", "1.13.1").meta("zero_grad_set_to_none", "0").meta("amp", "off");
    b.iteration(1).phase(Phase::forward).host(1, 4096, "fc|aten::linear>aten::addmm").free(1);
    auto r = analyze(b.build(), a100(), nullptr);
    assert_true(r.ok());
    const Estimate &e = r.value();
    assert_false(e.uses_gpu);
    assert_true(e.fits);
    EXPECT_U64(e.warnings.size(), 1);
    EXPECT_CONTAINS(e.warnings[0], "xmem: warning: the job made no GPU tensors");
    auto j = nlohmann::json::parse(render_json(e, {1.5, 0.01}));
    assert_false(j["uses_gpu"].get<bool>());
    EXPECT_CONTAINS(j["fits_reason"].get<std::string>(), "CUDA context alone");
    EXPECT_U64(j["warnings"].size(), 1);
    EXPECT_CONTAINS(render_human(e, {1.5, 0.01}), "fits: yes, but only as the CUDA context alone");

    auto used = analyze(adam_capture(), a100(), nullptr); // a real job: no warning
    assert_true(used.ok());
    assert_true(used.value().uses_gpu);
    assert_true(used.value().warnings.empty());
}

// The capture's own warnings (M warning_<what>: steps found at backward, torch.compile run
// eagerly) become warning lines of the estimate; other metadata does not.
static void capture_warnings_become_estimate_warnings(void **)
{
    Builder b;
    b.meta("torch", "2.14.1").meta("amp", "off").meta("step_rule", "backward");
    b.meta("warning_steps", "steps were counted at each backward()");
    b.meta("warning_compile", "torch.compile ran eagerly");
    b.iteration(1).phase(Phase::forward).alloc(1, 4096, "fc|aten::linear>aten::addmm").free(1);
    auto r = analyze(b.build(), a100(), nullptr);
    assert_true(r.ok());
    const Estimate &e = r.value();
    EXPECT_U64(e.warnings.size(), 2);
    EXPECT_CONTAINS(e.warnings[0] + e.warnings[1], "xmem: warning: torch.compile ran eagerly");
    EXPECT_CONTAINS(e.warnings[0] + e.warnings[1],
                    "xmem: warning: steps were counted at each backward()");
}

// Issue 17 class 10: a catalog number whose source says "uncalibrated" is marked as a guess.
static void uncalibrated_catalog_terms_are_marked(void **)
{
    Target t = a100();
    t.gpu.sources = {{"context_mib", "a budget, not measured; uncalibrated"},
                     {"total_mib", "the data sheet"}};
    auto r = analyze(adam_capture(), t, nullptr);
    assert_true(r.ok());
    auto j = nlohmann::json::parse(render_json(r.value(), {1.5, 0.01}));
    EXPECT_U64(j["uncalibrated_catalog_terms"].size(), 1);
    EXPECT_STR(j["uncalibrated_catalog_terms"][0].get<std::string>(), "context_mib");
    EXPECT_CONTAINS(render_human(r.value(), {1.5, 0.01}),
                    "uncalibrated catalog terms for A100-40GB: context_mib");
    auto measured = analyze(adam_capture(), a100(), nullptr);
    EXPECT_U64(nlohmann::json::parse(
                   render_json(measured.value(), {1.5, 0.01}))["uncalibrated_catalog_terms"]
                   .size(),
               0);
}

static void a_bad_alloc_conf_is_a_clear_error(void **)
{
    Target t = a100();
    t.alloc_conf = "max_split_size_mb:banana";
    auto r = analyze(adam_capture(), t, nullptr);
    assert_false(r.ok());
    EXPECT_CONTAINS(r.error().message, "xmem: PYTORCH_CUDA_ALLOC_CONF");
}

int run_estimate_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_adam_job_end_to_end),
        cmocka_unit_test(json_is_complete_and_consistent),
        cmocka_unit_test(a_gpu_too_small_does_not_fit),
        cmocka_unit_test(a_job_that_does_not_fit_says_what_it_needs),
        cmocka_unit_test(the_limit_covers_every_workspace_factor_up_to_the_bound),
        cmocka_unit_test(a_bad_alloc_conf_is_a_clear_error),
        cmocka_unit_test(a_job_without_gpu_tensors_is_warned_about),
        cmocka_unit_test(capture_warnings_become_estimate_warnings),
        cmocka_unit_test(uncalibrated_catalog_terms_are_marked),
    };
    return cmocka_run_group_tests_name("estimate", tests, nullptr, nullptr);
}
