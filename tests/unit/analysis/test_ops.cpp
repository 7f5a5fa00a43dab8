// ops: what an allocation's context says about the CUDA kernel (contexts as xmem-profile
// writes them: "MODULE|OUTER>INNER").
#include "analysis/ops.h"

#include "est_helpers.h"

using namespace esttest;

static void splits_module_outer_and_inner(void **)
{
    EXPECT_STR(std::string(innermost_op("conv1|aten::conv2d>aten::mkldnn_convolution")),
               "aten::mkldnn_convolution");
    EXPECT_STR(std::string(innermost_op("fc|aten::linear>aten::addmm")), "aten::addmm");
    EXPECT_STR(std::string(innermost_op("bn1|")), "");
    EXPECT_STR(std::string(innermost_op("")), "");
    EXPECT_STR(std::string(outer_call("conv1|aten::conv2d>aten::empty")), "conv1|aten::conv2d");
    EXPECT_STR(std::string(outer_call("|Optimizer.step#Adam.step")), "|Optimizer.step#Adam.step");
}

static void recognises_gemms_and_convolutions(void **)
{
    assert_true(is_gemm_output("fc|aten::linear>aten::addmm"));
    assert_true(is_gemm_output("|autograd::engine::evaluate_function: AddmmBackward0>aten::mm"));
    assert_true(is_gemm_output("|aten::matmul>aten::bmm>aten::empty"));
    // A copy an op makes of its input is not the GEMM's result (the workspace follows that).
    assert_false(is_gemm_output("|aten::matmul>aten::reshape>aten::clone>aten::empty"));
    assert_false(is_gemm_output("|autograd::engine::evaluate_function: BmmBackward0>aten::empty"));
    assert_true(is_cublaslt_op("fc|aten::linear>aten::addmm"));
    assert_false(is_cublaslt_op("|autograd::engine::evaluate_function: AddmmBackward0>aten::mm"));
    assert_false(is_gemm_output("relu|aten::relu>aten::empty"));
    assert_true(is_conv_forward_op("conv1|aten::conv2d>aten::empty"));
    assert_false(is_conv_forward_op(
        "|autograd::engine::evaluate_function: ConvolutionBackward0>aten::convolution_backward"));
    assert_true(is_conv_backward_op(
        "|autograd::engine::evaluate_function: ConvolutionBackward0>aten::empty"));
    assert_true(is_grad_accumulation(
        "|autograd::engine::evaluate_function: ConvolutionBackward0>aten::add"));
    assert_false(
        is_grad_accumulation("|autograd::engine::evaluate_function: AddBackward0>aten::empty"));
    assert_false(is_grad_accumulation("x|aten::add")); // a forward add
}

static void knows_cpu_only_temporaries_and_host_scalars(void **)
{
    assert_true(is_cpu_only_temporary_op("conv1|aten::conv2d>aten::mkldnn_convolution"));
    assert_true(is_cpu_only_temporary_op("x|aten::to_dense"));
    assert_false(is_cpu_only_temporary_op("relu|aten::relu>aten::empty"));
    assert_false(is_cpu_only_temporary_op("conv1|aten::conv2d>aten::empty")); // the output
    assert_true(is_host_scalar_ctx("bn1|"));                                  // Python-level wrap
    assert_true(is_host_scalar_ctx("avgpool|aten::adaptive_avg_pool2d>aten::div_"));
    assert_true(is_host_scalar_ctx("bn1.num_batches_tracked|aten::add"));
    assert_false(
        is_host_scalar_ctx("CrossEntropyLoss|aten::cross_entropy_loss>aten::nll_loss_forward"));
    assert_false(is_host_scalar_ctx("x|aten::__iand__")); // dunder, not in place by name rule
}

static void run_keys_group_by_outer_call(void **)
{
    Workload w;
    uint64_t a = w.intern("conv1|aten::conv2d>aten::mkldnn_convolution");
    uint64_t b = w.intern("conv1|aten::conv2d>aten::empty");
    uint64_t c = w.intern("bn1|aten::batch_norm>aten::empty");
    OpRunKeys keys(w);
    EXPECT_U64(keys.key(a), keys.key(b));
    assert_true(keys.key(a) != keys.key(c));
}

int run_ops_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(splits_module_outer_and_inner),
        cmocka_unit_test(recognises_gemms_and_convolutions),
        cmocka_unit_test(knows_cpu_only_temporaries_and_host_scalars),
        cmocka_unit_test(run_keys_group_by_outer_call),
    };
    return cmocka_run_group_tests_name("ops", tests, nullptr, nullptr);
}
