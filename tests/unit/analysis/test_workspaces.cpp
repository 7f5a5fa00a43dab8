// workspaces: what only a GPU allocates, per release and architecture.
#include "analysis/workspaces.h"

#include "est_helpers.h"

using namespace esttest;

namespace
{

GpuSpec gpu(int major)
{
    GpuSpec g;
    g.name = major == 9 ? "H100" : "A100";
    g.cc_major = major;
    g.total_bytes = 40ull << 30;
    g.cublas_workspace_bytes = major == 9 ? 32 * MiB : 8320 * KiB;
    g.cublaslt_workspace_bytes = 1 * MiB;
    g.cudnn_context_bytes = 300 * MiB;
    return g;
}

// forward: two Linear layers (addmm), backward: their mm, then a second forward.
Workload mlp_trace()
{
    Builder b;
    b.iteration(1).phase(Phase::forward);
    b.alloc(1, 1000, "fc1|aten::linear>aten::addmm").alloc(2, 1000, "act|aten::relu>aten::empty");
    b.alloc(3, 1000, "fc2|aten::linear>aten::addmm");
    b.phase(Phase::backward)
        .alloc(4, 4000, "|autograd::engine::evaluate_function: AddmmBackward0>aten::mm");
    b.alloc(5, 4000, "|autograd::engine::evaluate_function: AddmmBackward0>aten::mm");
    b.iteration(2).phase(Phase::forward).alloc(6, 1000, "fc1|aten::linear>aten::addmm");
    return b.build();
}

} // namespace

static void policy_follows_release_and_architecture(void **)
{
    WorkspacePolicy p = workspace_policy({2, 1}, gpu(8));
    EXPECT_U64(p.cublas_bytes, 8519680); // 4096*1024*2 + 16*1024*8
    EXPECT_U64(p.cublas_outside_bytes, 0);
    assert_true(p.lt == LtWorkspace::transient);
    EXPECT_U64(workspace_policy({2, 1}, gpu(9)).cublas_bytes, 32 * MiB);
    WorkspacePolicy old = workspace_policy({1, 13}, gpu(8));
    EXPECT_U64(old.cublas_bytes, 0); // 1.13: cuBLAS allocates it itself
    EXPECT_U64(old.cublas_outside_bytes, 2 * 8519680);
    assert_true(old.lt == LtWorkspace::none);
    assert_true(workspace_policy({2, 8}, gpu(8)).lt == LtWorkspace::persistent);
    assert_true(workspace_policy({2, 10}, gpu(8)).lt == LtWorkspace::none);
}

static void one_cublas_workspace_per_handle_and_lt_per_addmm(void **)
{
    Workload w = mlp_trace();
    WorkspaceStats s = add_workspaces(w, workspace_policy({2, 1}, gpu(8)));
    EXPECT_U64(s.cublas, 2); // forward thread + autograd thread
    EXPECT_U64(s.cublaslt, 3);
    // Inserted after the op's output: ids continue at 7.
    EXPECT_STR(summary(w), "A1:1000 A7:8519680 A8:1048576 F8 A2:1000 A3:1000 A9:1048576 F9 "
                           "A4:4000 A10:8519680 A5:4000 A6:1000 A11:1048576 F11");
    EXPECT_U64(bytes_with_ctx(w, "xmem|cublas_workspace"), 2 * 8519680);
    assert_false(s.uses_cudnn); // no convolution: cuDNN never loads
    EXPECT_U64(s.outside_bytes, 0);
}

static void persistent_lt_is_allocated_once(void **)
{
    Workload w = mlp_trace();
    WorkspaceStats s = add_workspaces(w, workspace_policy({2, 9}, gpu(9)));
    EXPECT_U64(s.cublaslt, 1);
    EXPECT_U64(bytes_with_ctx(w, "xmem|cublaslt"), 1 * MiB);
    EXPECT_U64(bytes_with_ctx(w, "xmem|cublas_workspace"), 2 * 32 * MiB);
}

static void cudnn_model_is_a_transient_block_after_the_output(void **)
{
    // conv1: 3x3, stride 1, input 2x16x4x4, 24 output channels, fp32: input 2048 B, output
    // 3072 B, weight 13824 B. conv2: 1x1, no large workspace.
    Builder b;
    b.iteration(1).phase(Phase::forward).alloc(1, 3072, "conv1|aten::conv2d>aten::empty");
    b.alloc(2, 3072, "conv2|aten::conv2d>aten::empty");
    b.phase(Phase::backward).alloc(3, 3072, "|ConvolutionBackward0>aten::empty"); // conv2
    b.alloc(4, 2048, "|ConvolutionBackward0>aten::empty");                        // conv1 dx
    b.alloc(5, 13824, "|ConvolutionBackward0>aten::empty");                       // conv1 dw
    Workload w = b.build();
    w.kernels = {"conv1 conv x=2,16,4,4 w=24,16,3,3 s=1,1 p=1,1 d=1,1 g=1 e=4 t=0",
                 "conv2 conv x=2,24,4,4 w=24,24,1,1 s=1,1 p=0,0 d=1,1 g=1 e=4 t=0"};
    WorkspacePolicy p = workspace_policy({2, 1}, gpu(8));
    p.conv_factor = 0.5;
    p.conv_cap_bytes = 6 * MiB;
    WorkspaceStats s = add_workspaces(w, p);
    EXPECT_U64(s.cudnn, 3);
    EXPECT_U64(s.cudnn_max_bytes, 2560); // 0.5 x (2048 + 3072)
    EXPECT_STR(summary(w),
               "A1:3072 A6:2560 F6 A2:3072 A3:3072 A4:2048 A7:2560 F7 A5:13824 A8:2560 F8");
    assert_true(s.uses_cudnn);
    EXPECT_U64(s.outside_bytes, 300 * MiB); // cuDNN's handle and kernels
}

static void branches_sharing_an_input_each_get_their_backward_workspaces(void **)
{
    // Two 3x3 convolutions of one input (an Inception block's branches). In the backward the
    // engine sums their grad_inputs (an aten::add in the second node's context), which has
    // grad_input's size but is no cuDNN pass: it must not take a's grad_weight's match away.
    Builder b;
    b.iteration(1).phase(Phase::forward).alloc(1, 3072, "a|aten::conv2d>aten::empty");
    b.alloc(2, 3072, "b|aten::conv2d>aten::empty");
    const char *bwd = "|autograd::engine::evaluate_function: ConvolutionBackward0>aten::empty";
    b.phase(Phase::backward).alloc(3, 2048, bwd).alloc(4, 13824, bwd); // b: dx, dw
    b.alloc(5, 2048, bwd);                                             // a: dx
    b.alloc(6, 2048, "|autograd::engine::evaluate_function: ConvolutionBackward0>aten::add");
    b.alloc(7, 13824, bwd); // a: dw
    Workload w = b.build();
    w.kernels = {"a conv x=2,16,4,4 w=24,16,3,3 s=1,1 p=1,1 d=1,1 g=1 e=4 t=0",
                 "b conv x=2,16,4,4 w=24,16,3,3 s=1,1 p=1,1 d=1,1 g=1 e=4 t=0"};
    WorkspacePolicy p = workspace_policy({2, 1}, gpu(8));
    p.conv_factor = 0.5;
    WorkspaceStats s = add_workspaces(w, p);
    EXPECT_U64(s.cudnn, 6);
    EXPECT_STR(summary(w),
               "A1:3072 A8:2560 F8 A2:3072 A9:2560 F9 A3:2048 A10:2560 F10 "
               "A4:13824 A11:2560 F11 A5:2048 A12:2560 F12 A6:2048 A7:13824 A13:2560 F13");
}

static void grad_bias_before_grad_weight_keeps_the_filter_pass(void **)
{
    // The exact capture's oneDNN backward makes grad_bias (96 B: 24 channels) between
    // grad_input and grad_weight; CUDA makes it after both, as fast mode records. Both orders
    // give the filter pass its workspace, or the exact estimate lacks one per convolution
    // (issue 33: -2.2 % on a style-transfer net), and both come out in CUDA's order.
    for (bool cpu_order : {false, true}) {
        Builder b;
        b.iteration(1).phase(Phase::forward).alloc(1, 3072, "a|aten::conv2d>aten::empty");
        const char *bwd = "|autograd::engine::evaluate_function: ConvolutionBackward0>aten::empty";
        b.phase(Phase::backward).alloc(2, 2048, bwd); // dx
        if (cpu_order)
            b.alloc(3, 96, bwd).alloc(4, 13824, bwd); // db, dw
        else
            b.alloc(4, 13824, bwd).alloc(3, 96, bwd); // dw, db
        Workload w = b.build();
        w.kernels = {"a conv x=2,16,4,4 w=24,16,3,3 s=1,1 p=1,1 d=1,1 g=1 e=4 t=0"};
        WorkspacePolicy p = workspace_policy({2, 1}, gpu(8));
        p.conv_factor = 0.5;
        WorkspaceStats s = add_workspaces(w, p);
        EXPECT_U64(s.cudnn, 3); // forward, backward data, backward filter
        EXPECT_STR(summary(w), "A1:3072 A5:2560 F5 A2:2048 A6:2560 F6 A4:13824 A7:2560 F7 A3:96");
    }
}

static void cublas_workspace_comes_at_the_gemm_call(void **)
{
    // The GPU (cs336 attention snapshot, tests/groundtruth) allocates each handle's workspace
    // inside the GEMM's cuBLAS call: after the op's output and the contiguous copy of an
    // operand cuBLAS cannot read (a stride-0 gradient), before that copy is freed. A backward
    // node whose first allocation is not a GEMM output (per-slice copies on the CPU) still
    // gets it at its GEMM, not at the next node's.
    Builder b;
    const char *node = "|autograd::engine::evaluate_function: BmmBackward0";
    b.iteration(1).phase(Phase::forward).alloc(1, 1000, "|aten::einsum>aten::bmm");
    b.alloc(2, 1000, "|aten::div");
    b.phase(Phase::backward).alloc(3, 100, std::string(node) + ">aten::empty").free(3);
    b.alloc(4, 2000, std::string(node) + ">aten::bmm");
    b.alloc(5, 800, std::string(node) + ">aten::bmm>aten::clone>aten::empty").free(5);
    b.alloc(6, 3000, std::string(node) + ">aten::bmm");
    b.alloc(7, 2000, "|autograd::engine::evaluate_function: BmmBackward0>aten::bmm");
    Workload w = b.build();
    WorkspaceStats s = add_workspaces(w, workspace_policy({2, 6}, gpu(8)));
    EXPECT_U64(s.cublas, 2);
    EXPECT_STR(summary(w), "A1:1000 A8:8519680 A2:1000 A3:100 F3 A4:2000 A5:800 A9:8519680 F5 "
                           "A6:3000 A7:2000");
}

static void a_host_only_batch_is_promoted(void **)
{
    Builder b;
    b.iteration(1).phase(Phase::data);
    b.host(1, 3072, "|enumerate(DataLoader)#it>aten::empty"); // staging, freed in data
    b.host(2, 3072, "|enumerate(DataLoader)#it>aten::cat");   // the batch
    b.free(1).phase(Phase::forward).alloc(3, 100, "fc|aten::linear>aten::addmm").free(2);
    b.iteration(2).phase(Phase::data).alloc(4, 3072, "|aten::to>aten::empty_strided");
    b.host(5, 3072, "|enumerate(DataLoader)#it>aten::cat").phase(Phase::forward);
    Workload w = b.build();
    EXPECT_U64(add_input_copies(w), 1); // iteration 2 copied its batch itself
    EXPECT_U64(static_cast<int>(w.events[3].dev), static_cast<int>(Device::gpu));   // A2
    EXPECT_U64(static_cast<int>(w.events[2].dev), static_cast<int>(Device::host));  // A1
    EXPECT_U64(static_cast<int>(w.events[7].dev), static_cast<int>(Device::gpu));   // F2
    EXPECT_U64(static_cast<int>(w.events[11].dev), static_cast<int>(Device::host)); // A5
}

int run_workspaces_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(policy_follows_release_and_architecture),
        cmocka_unit_test(one_cublas_workspace_per_handle_and_lt_per_addmm),
        cmocka_unit_test(persistent_lt_is_allocated_once),
        cmocka_unit_test(cudnn_model_is_a_transient_block_after_the_output),
        cmocka_unit_test(branches_sharing_an_input_each_get_their_backward_workspaces),
        cmocka_unit_test(grad_bias_before_grad_weight_keeps_the_filter_pass),
        cmocka_unit_test(cublas_workspace_comes_at_the_gemm_call),
        cmocka_unit_test(a_host_only_batch_is_promoted),
    };
    return cmocka_run_group_tests_name("workspaces", tests, nullptr, nullptr);
}
