// cpu_filter: what a GPU run does not ask of the device allocator is removed, with its
// frees; everything else stays in order.
#include "analysis/cpu_filter.h"

#include "est_helpers.h"

using namespace esttest;

static void host_storages_go_with_their_frees(void **)
{
    Builder b;
    b.iteration(1).phase(Phase::data);
    b.host(1, 3072, "|enumerate(DataLoader)#x>aten::empty")
        .alloc(2, 3072, "|aten::to>aten::empty_strided");
    b.free(1).phase(Phase::forward).free(2);
    Workload w = b.build();
    FilterStats s = drop_cpu_only(w);
    EXPECT_STR(summary(w), "A2:3072 F2");
    EXPECT_U64(s.host.count, 1);
    EXPECT_U64(s.host.bytes, 3072);
    EXPECT_U64(s.scalar.count + s.cpu_temp.count, 0);
}

static void host_scalars_are_dropped_but_device_scalars_stay(void **)
{
    Builder b;
    b.iteration(1).phase(Phase::forward);
    b.alloc(1, 8, "bn1|");                                         // num_batches_tracked += 1
    b.alloc(2, 8, "avgpool|aten::adaptive_avg_pool2d>aten::div_"); // wrapped divisor
    b.alloc(3, 4, "CrossEntropyLoss|aten::cross_entropy_loss>aten::nll_loss_forward"); // the loss
    b.alloc(4, 16, "bn1|");                                             // > 8 B: not a scalar
    b.phase(Phase::optimizer).alloc(5, 8, "|Optimizer.step#Adam.step"); // step counter
    b.alloc(6, 4096, "|Optimizer.step#Adam.step>aten::sqrt");
    b.free(1).free(2).free(3).free(4).free(5).free(6);
    Workload w = b.build();
    FilterStats s = drop_cpu_only(w);
    EXPECT_STR(summary(w), "A3:4 A4:16 A6:4096 F3 F4 F6");
    EXPECT_U64(s.scalar.count, 3);
    EXPECT_U64(s.scalar.bytes, 24);
}

static void temporaries_inside_a_cpu_convolution_are_dropped(void **)
{
    Builder b;
    b.iteration(1).phase(Phase::forward);
    b.alloc(1, 1728, "conv1|aten::conv2d>aten::mkldnn_convolution"); // weight reorder
    b.alloc(2, 65536, "conv1|aten::conv2d>aten::empty");             // the output
    b.free(1);                                                       // inside the op: CPU-only
    b.alloc(3, 65536, "relu|aten::relu>aten::empty");                // next op
    b.alloc(4, 512, "relu|aten::relu>aten::empty");
    b.free(4); // relu temp: kept (not a conv)
    b.alloc(5, 999, "conv2|aten::conv2d>aten::mkldnn_convolution");
    b.alloc(6, 100, "pool|aten::max_pool2d>aten::empty");
    b.free(5); // freed after the run ended: kept
    // Backward: oneDNN's blocked grad_weight is scratch; the dense one (aten::empty) is the
    // result, even when 1.13's AccumulateGrad frees it at once (grad += buffer), after the
    // engine released the node's input gradient (3).
    const std::string bwd = "|autograd::engine::evaluate_function: ConvolutionBackward0";
    b.phase(Phase::backward).alloc(7, 4096, bwd + ">aten::convolution_backward");
    b.alloc(8, 4096, bwd + ">aten::empty").free(7).free(3).free(8);
    Workload w = b.build();
    FilterStats s = drop_cpu_only(w);
    EXPECT_STR(summary(w), "A2:65536 A3:65536 A4:512 F4 A5:999 A6:100 F5 A8:4096 F3 F8");
    EXPECT_U64(s.cpu_temp.count, 2);
    EXPECT_U64(s.cpu_temp.bytes, 1728 + 4096);
}

// oneDNN's at::empty buffers that die inside the kernel (a weight copy, a grad_output copy,
// the buffer grad_weight is reordered through) are dropped from exact traces; the outputs,
// freed after the engine released the node's input gradient, stay. The next kernel in the
// same op run begins after that release.
static void onednn_backward_scratch_is_dropped_from_exact_traces(void **)
{
    const std::string bwd = "|autograd::engine::evaluate_function: ConvolutionBackward0";
    for (bool fast : {false, true}) {
        Builder b;
        if (fast)
            b.meta("capture", "fast");
        b.iteration(1).phase(Phase::backward);
        b.alloc(1, 64, "|autograd::engine::evaluate_function: GeluBackward0>aten::empty");
        b.alloc(2, 4096, bwd + ">aten::empty");    // weight copy
        b.alloc(3, 64, bwd + ">aten::empty");      // grad_output copy
        b.alloc(4, 128, bwd + ">aten::resize_");   // grad_input
        b.alloc(5, 4096, bwd + ">aten::empty");    // reorder buffer
        b.alloc(6, 4096, bwd + ">aten::empty");    // grad_weight
        b.free(5).free(3).free(2).free(1).free(6); // 1: the node's input, released
        b.alloc(7, 4096, bwd + ">aten::empty");    // the next conv's weight copy
        b.free(7).alloc(8, 64, "|autograd::engine::evaluate_function: MulBackward0>aten::mul");
        b.free(4);
        Workload w = b.build();
        FilterStats s = drop_cpu_only(w);
        EXPECT_STR(summary(w), fast ? "A1:64 A2:4096 A3:64 A4:128 A5:4096 A6:4096 F5 F3 F2 F1 "
                                      "F6 A7:4096 F7 A8:64 F4"
                                    : "A1:64 A4:128 A6:4096 F1 F6 A8:64 F4");
        EXPECT_U64(s.cpu_temp.count, fast ? 0 : 4);
    }
}

static void cpu_batch_norm_backward_scratch_is_dropped(void **)
{
    // ResNet-50's exact trace (issue 33): the CPU's batch norm backward makes an input-sized
    // buffer, then grad_weight, grad_bias and grad_input, and frees the buffer before the
    // engine releases the node's input gradient (the ReLU backward's output).
    const std::string bwd = "|autograd::engine::evaluate_function: NativeBatchNormBackward0";
    Builder b;
    b.iteration(1).phase(Phase::backward);
    b.alloc(1, 4096,
            "|autograd::engine::evaluate_function: ReluBackward0>aten::threshold_backward");
    b.alloc(2, 4096, bwd + ">aten::empty"); // scratch
    b.alloc(3, 64, bwd + ">aten::empty");   // grad_weight
    b.alloc(4, 64, bwd + ">aten::empty");   // grad_bias
    b.alloc(5, 4096, bwd + ">aten::empty"); // grad_input
    b.free(2).free(1);                      // 1: the node's input, released
    b.alloc(6, 4096, "|autograd::engine::evaluate_function: ConvolutionBackward0>aten::empty");
    b.free(5);
    Workload w = b.build();
    FilterStats s = drop_cpu_only(w);
    EXPECT_STR(summary(w), "A1:4096 A3:64 A4:64 A5:4096 F1 A6:4096 F5");
    EXPECT_U64(s.cpu_temp.count, 1);
}

// fp32 x + bf16 y under autocast: the CPU copies y to fp32 inside the add; a CUDA kernel
// casts while it loads. Only exact traces have the copy; the add's output stays.
static void cpu_dtype_promotion_copies_are_dropped_from_exact_traces(void **)
{
    for (bool fast : {false, true}) {
        Builder b;
        if (fast)
            b.meta("capture", "fast");
        b.iteration(1).phase(Phase::forward);
        b.alloc(1, 4096, "1|aten::add>aten::empty_strided"); // y cast to fp32
        b.alloc(2, 4096, "1|aten::add");                     // the sum
        b.free(1);
        b.alloc(3, 2048, "2|aten::mul_>aten::empty_strided"); // in place: the same copy
        b.free(3);
        b.alloc(4, 2048, "2|aten::linear>aten::empty_strided"); // autocast's cast: kept
        b.free(4);
        b.alloc(5, 2048, "3|aten::add>aten::empty_strided"); // outlives its op: kept
        b.alloc(6, 64, "3|aten::relu").free(5);
        Workload w = b.build();
        FilterStats s = drop_cpu_only(w);
        EXPECT_STR(summary(w), fast ? "A1:4096 A2:4096 F1 A3:2048 F3 A4:2048 F4 A5:2048 A6:64 F5"
                                    : "A2:4096 A4:2048 F4 A5:2048 A6:64 F5");
        EXPECT_U64(s.cpu_temp.count, fast ? 0 : 2);
    }
}

// The same copy in the backward sits directly under the node (DivBackward0 of
// `scores / 4.0`, the cs336 snapshot's): dropped too. Another node's factory is kept.
static void cpu_dtype_promotion_in_a_backward_node_is_dropped(void **)
{
    const std::string div = "|autograd::engine::evaluate_function: DivBackward0";
    const std::string acc = "|autograd::engine::evaluate_function: torch::autograd::AccumulateGrad";
    Builder b;
    b.iteration(1).phase(Phase::backward);
    b.alloc(1, 4, div + ">aten::empty_strided").alloc(2, 4096, div + ">aten::div").free(1);
    b.alloc(3, 4, div + ">aten::mul>aten::empty_strided").alloc(4, 64, div + ">aten::mul");
    b.free(3);
    b.alloc(5, 4096, acc + ">aten::empty_strided").alloc(6, 64, acc + ">aten::add").free(5);
    Workload w = b.build();
    FilterStats s = drop_cpu_only(w);
    EXPECT_STR(summary(w), "A2:4096 A3:4 A4:64 F3 A5:4096 A6:64 F5");
    EXPECT_U64(s.cpu_temp.count, 1);
}

static void a_phase_mark_ends_an_op_run(void **)
{
    Builder b;
    b.iteration(1).phase(Phase::forward);
    b.alloc(1, 4096, "conv1|aten::conv2d>aten::mkldnn_convolution");
    b.phase(Phase::backward).free(1);
    Workload w = b.build();
    drop_cpu_only(w);
    EXPECT_STR(summary(w), "A1:4096 F1");
}

int run_cpu_filter_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_storages_go_with_their_frees),
        cmocka_unit_test(host_scalars_are_dropped_but_device_scalars_stay),
        cmocka_unit_test(temporaries_inside_a_cpu_convolution_are_dropped),
        cmocka_unit_test(onednn_backward_scratch_is_dropped_from_exact_traces),
        cmocka_unit_test(cpu_batch_norm_backward_scratch_is_dropped),
        cmocka_unit_test(cpu_dtype_promotion_copies_are_dropped_from_exact_traces),
        cmocka_unit_test(cpu_dtype_promotion_in_a_backward_node_is_dropped),
        cmocka_unit_test(a_phase_mark_ends_an_op_run),
    };
    return cmocka_run_group_tests_name("cpu_filter", tests, nullptr, nullptr);
}
