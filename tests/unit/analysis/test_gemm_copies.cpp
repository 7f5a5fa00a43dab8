// gemm_copies: a batched GEMM's per-slice CPU copies become CUDA's one whole copy.
#include "analysis/gemm_copies.h"

#include "analysis/workspaces.h"
#include "est_helpers.h"

using namespace esttest;

namespace
{

const std::string k_node = "|autograd::engine::evaluate_function: BmmBackward0";

// The exact capture of `bmm` with an expanded gradient: B slice copies, then the output.
Builder &slices(Builder &b, uint64_t first_id, int count, uint64_t bytes)
{
    for (int i = 0; i < count; ++i)
        b.alloc(first_id + i, bytes, k_node + ">aten::empty").free(first_id + i);
    return b;
}

} // namespace

static void per_slice_copies_become_one_copy_after_the_output(void **)
{
    Builder b;
    b.iteration(1).phase(Phase::backward);
    slices(b, 10, 4, 256);
    b.alloc(1, 2048, k_node + ">aten::bmm");
    slices(b, 20, 4, 256);
    b.alloc(2, 8192, k_node + ">aten::bmm");
    Workload w = b.build();
    GemmCopyStats s = merge_batched_gemm_copies(w);
    EXPECT_U64(s.merged, 2);
    EXPECT_U64(s.slices, 8);
    EXPECT_STR(summary(w), "A1:2048 A24:1024 F24 A2:8192 A25:1024 F25");
    // The first backward GEMM's cuBLAS workspace goes between the copy and its free, as on
    // the GPU (prepare_batch_matrix_for_cublas, then the handle, then the op returns).
    add_workspaces(w, workspace_policy({2, 6}, [] {
                       GpuSpec g;
                       g.cublas_workspace_bytes = 8320 * KiB;
                       return g;
                   }()));
    EXPECT_STR(summary(w), "A1:2048 A24:1024 A26:8519680 F24 A2:8192 A25:1024 F25");
}

static void other_allocations_are_left_alone(void **)
{
    Builder b;
    b.iteration(1).phase(Phase::backward);
    // One copy only (a whole 2-D operand, not per slice); a pair of another op run; a pair
    // not freed at once; slices of two sizes.
    slices(b, 10, 1, 256);
    b.alloc(1, 2048, k_node + ">aten::bmm");
    b.alloc(11, 256, "|aten::relu>aten::empty").free(11);
    b.alloc(12, 256, "|aten::relu>aten::empty").free(12);
    b.alloc(2, 2048, k_node + ">aten::bmm");
    b.alloc(13, 256, k_node + ">aten::empty").alloc(14, 256, k_node + ">aten::empty");
    b.free(13).free(14);
    b.alloc(3, 2048, k_node + ">aten::bmm");
    b.alloc(15, 256, k_node + ">aten::empty").free(15);
    b.alloc(16, 128, k_node + ">aten::empty").free(16);
    b.alloc(4, 2048, k_node + ">aten::bmm");
    Workload w = b.build();
    std::string before = summary(w);
    EXPECT_U64(merge_batched_gemm_copies(w).merged, 0);
    EXPECT_STR(summary(w), before);
}

int run_gemm_copies_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(per_slice_copies_become_one_copy_after_the_output),
        cmocka_unit_test(other_allocations_are_left_alone),
    };
    return cmocka_run_group_tests_name("gemm_copies", tests, nullptr, nullptr);
}
