// Job spec of xmem-profile-libtorch: accepted shapes, and one clear line per bad input.
#include "job_spec.h"
#include "test-list.h"

using namespace xmem::libtorch;

namespace
{
const char *k_valid =
    "module: model.pt\n"
    "batch_size: 8\n"
    "iterations: 4\n"
    "inputs:\n"
    "  - shape: [3, 32, 32]\n"
    "    dtype: float32\n"
    "  - {shape: [7], dtype: int64, classes: 100}\n"
    "target: {shape: [], dtype: int64, classes: 10}\n"
    "loss: cross_entropy\n"
    "optimizer: {name: adamw, lr: 0.0003, betas: [0.9, 0.95], weight_decay: 0.1}\n";

std::string error_of(const std::string &text)
{
    auto spec = parse_job_spec(text, "job.yaml", "/jobs");
    assert_false(spec.ok());
    return spec.error().message;
}

std::string replace(std::string text, const std::string &from, const std::string &to)
{
    size_t at = text.find(from);
    assert_true(at != std::string::npos);
    return text.replace(at, from.size(), to);
}
} // namespace

static void parses_a_full_spec(void **state)
{
    auto parsed = parse_job_spec(k_valid, "job.yaml", "/jobs");
    assert_true(parsed.ok());
    const JobSpec &s = parsed.value();
    assert_string_equal(s.module_path.c_str(), "/jobs/model.pt");
    assert_int_equal(s.batch_size, 8);
    assert_int_equal(s.steps, 4);
    assert_int_equal(s.inputs.size(), 2);
    assert_int_equal(s.inputs[0].shape.size(), 3);
    assert_int_equal(s.inputs[0].shape[2], 32);
    assert_int_equal(static_cast<int>(s.inputs[1].dtype), static_cast<int>(DType::int64));
    assert_int_equal(s.inputs[1].classes, 100);
    assert_int_equal(s.target.shape.size(), 0);
    assert_int_equal(static_cast<int>(s.optimizer.kind), static_cast<int>(OptimizerKind::adamw));
    assert_true(s.optimizer.beta2 == 0.95);
    assert_true(s.optimizer.weight_decay == 0.1);
    assert_int_equal(static_cast<int>(s.loss), static_cast<int>(Loss::cross_entropy));
}

static void absolute_module_paths_stay(void **state)
{
    auto s = parse_job_spec(replace(k_valid, "module: model.pt", "module: /m/x.pt"), "j", "/jobs");
    assert_true(s.ok());
    assert_string_equal(s.value().module_path.c_str(), "/m/x.pt");
}

static void errors_name_the_line_and_the_fix(void **state)
{
    assert_string_equal(error_of(replace(k_valid, "batch_size: 8", "batch_size: 0")).c_str(),
                        "xmem: job.yaml:2: batch_size: invalid value: 0 (expected 1 to 1048576)");
    assert_string_equal(
        error_of(replace(k_valid, "loss: cross_entropy", "loss: hinge")).c_str(),
        "xmem: job.yaml:9: loss: invalid value: hinge (expected cross_entropy or mse)");
    assert_string_equal(error_of(replace(k_valid, "iterations: 4", "iterationz: 4")).c_str(),
                        "xmem: job.yaml:3: job: unknown key 'iterationz'");
    assert_string_equal(
        error_of(replace(k_valid, "dtype: float32", "dtype: float8")).c_str(),
        "xmem: job.yaml:6: dtype: invalid value: float8 (expected float32, float64, float16, "
        "bfloat16, int64 or int32)");
    assert_string_equal(error_of(replace(k_valid, ", classes: 10}", "}")).c_str(),
                        "xmem: job.yaml:8: target: integer tensors need classes (values are drawn "
                        "from [0, classes))");
    assert_string_equal(
        error_of(replace(k_valid, "name: adamw", "name: lamb")).c_str(),
        "xmem: job.yaml:10: optimizer.name: invalid value: lamb (expected sgd, adam or adamw)");
    assert_string_equal(error_of(replace(k_valid, "[3, 32, 32]", "[3, -1, 32]")).c_str(),
                        "xmem: job.yaml:5: inputs[0].shape: sizes must be >= 1");
    assert_string_equal(error_of(replace(k_valid, "betas: [0.9, 0.95]", "betas: [0.9]")).c_str(),
                        "xmem: job.yaml:10: optimizer.betas: expected [beta1, beta2]");
}

static void missing_keys_and_bad_yaml(void **state)
{
    assert_string_equal(error_of(replace(k_valid, "loss: cross_entropy\n", "")).c_str(),
                        "xmem: job.yaml:1: loss is required");
    assert_string_equal(error_of("").c_str(),
                        "xmem: job.yaml: empty job spec (see docs/capture.md for the keys)");
    std::string err = error_of("module: [unclosed\n");
    assert_true(err.rfind("xmem: job.yaml:", 0) == 0);
    assert_string_equal(error_of("- a\n- b\n").c_str(),
                        "xmem: job.yaml:1: job: expected a mapping");
}

static void unreadable_file(void **state)
{
    auto s = load_job_spec("/nonexistent/job.yaml");
    assert_false(s.ok());
    assert_string_equal(s.error().message.c_str(),
                        "xmem: /nonexistent/job.yaml: cannot read the job spec (does it exist?)");
}

// "steps" is the project's word; "iterations", the key's first spelling, still parses.
static void steps_and_its_older_spelling(void **state)
{
    auto s = parse_job_spec(replace(k_valid, "iterations: 4", "steps: 5"), "j", "/jobs");
    assert_true(s.ok());
    assert_int_equal(s.value().steps, 5);
    assert_string_equal(error_of(replace(k_valid, "iterations: 4", "steps: 0")).c_str(),
                        "xmem: job.yaml:3: steps: invalid value (expected 1 to 1000)");
    auto d = parse_job_spec(replace(k_valid, "iterations: 4\n", ""), "j", "/jobs");
    assert_true(d.ok());
    assert_int_equal(d.value().steps, XMEM_DEFAULT_STEPS);
}

int xmem_test_group_job_spec(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_a_full_spec),
        cmocka_unit_test(absolute_module_paths_stay),
        cmocka_unit_test(errors_name_the_line_and_the_fix),
        cmocka_unit_test(missing_keys_and_bad_yaml),
        cmocka_unit_test(unreadable_file),
        cmocka_unit_test(steps_and_its_older_spelling),
    };
    return cmocka_run_group_tests_name("job_spec", tests, nullptr, nullptr);
}
