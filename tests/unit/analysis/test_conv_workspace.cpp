// conv_workspace: K records, output shapes, which convolutions may take a large workspace.
#include "analysis/conv_workspace.h"

#include "est_helpers.h"

using namespace esttest;

static void parses_a_record(void **)
{
    auto g = parse_conv_record("layer1.0.conv2 conv x=32,64,56,56 w=64,64,3,3 s=1,1 p=1,1 "
                               "d=1,1 g=1 e=2 t=0 future=7");
    assert_true(g.has_value());
    EXPECT_STR(g->module, "layer1.0.conv2");
    EXPECT_U64(g->input_numel(), 32ull * 64 * 56 * 56);
    EXPECT_U64(g->weight_numel(), 64ull * 64 * 9);
    EXPECT_U64(g->output_numel(), 32ull * 64 * 56 * 56);
    EXPECT_U64(g->elem, 2);
    assert_true(g->large_workspace_eligible());
}

static void rejects_malformed_records(void **)
{
    assert_false(parse_conv_record("c pool x=1,2,3,3").has_value());         // another kind
    assert_false(parse_conv_record("c conv x=1,2,3 w=1,2,3,3").has_value()); // ranks differ
    assert_false(parse_conv_record("c conv x=1,2,a,3 w=1,2,3,3").has_value());
    assert_false(parse_conv_record("c conv x=1,2,3,3 w=1,2,3,3 g=0").has_value());
    assert_false(parse_conv_record("c conv x=1,2,3,3 w=1,2,3,3 broken").has_value());
    assert_false(parse_conv_record("c").has_value());
}

static void output_shapes_follow_stride_padding_and_transposition(void **)
{
    // 7x7 stride 2 pad 3 on 224x224 (ResNet's stem): 112x112.
    auto stem = parse_conv_record("c conv x=2,3,224,224 w=64,3,7,7 s=2,2 p=3,3 d=1,1 g=1");
    EXPECT_U64(stem->output_numel(), 2ull * 64 * 112 * 112);
    assert_false(stem->large_workspace_eligible()); // strided
    auto same = parse_conv_record("c conv x=1,4,10,9 w=8,4,5,5 s=1,1 p=same d=1,1 g=1");
    EXPECT_U64(same->output_numel(), 8ull * 10 * 9);
    auto valid = parse_conv_record("c conv x=1,4,10,9 w=8,4,5,5 s=1,1 p=valid d=1,1 g=1");
    EXPECT_U64(valid->output_numel(), 8ull * 6 * 5);
    // Transposed, stride 2, pad 1, kernel 4: (in-1)*2 + 4 - 2 = 2*in.
    auto up = parse_conv_record("c conv x=1,16,8,8 w=16,4,4,4 s=2,2 p=1,1 d=1,1 g=2 t=1");
    EXPECT_U64(up->output_numel(), 8ull * 16 * 16);
    auto c1d = parse_conv_record("c conv x=4,8,100 w=16,8,3 s=1 p=0 d=2 g=1");
    EXPECT_U64(c1d->output_numel(), 4ull * 16 * 96);
}

static void only_ungrouped_unit_stride_spatial_kernels_of_many_channels_get_a_workspace(void **)
{
    auto sized = [](const char *text) {
        return conv_workspace_bytes(*parse_conv_record(text), 4, 2.0, 1ull << 40);
    };
    // 2 x 4 B x (input 2*16*8*8 + output 2*6*8*8) = 8 x 2816.
    EXPECT_U64(sized("c conv x=2,16,8,8 w=6,16,3,3 s=1,1 p=1,1 d=1,1 g=1"), 8 * 2816);
    EXPECT_U64(sized("c conv x=2,16,8,8 w=6,16,1,1 s=1,1 p=0,0 d=1,1 g=1"), 0);  // 1x1
    EXPECT_U64(sized("c conv x=2,16,8,8 w=16,1,3,3 s=1,1 p=1,1 d=1,1 g=16"), 0); // depthwise
    EXPECT_U64(sized("c conv x=2,16,8,8 w=6,16,3,3 s=2,2 p=1,1 d=1,1 g=1"), 0);  // strided
    EXPECT_U64(sized("c conv x=2,16,8,8 w=6,16,3,3 s=1,1 p=2,2 d=2,2 g=1"), 0);  // dilated
    EXPECT_U64(sized("c conv x=2,3,8,8 w=6,3,3,3 s=1,1 p=1,1 d=1,1 g=1"), 0);    // RGB input
    auto g = *parse_conv_record("c conv x=2,16,8,8 w=6,16,3,3 s=1,1 p=1,1 d=1,1 g=1");
    EXPECT_U64(conv_workspace_bytes(g, 4, 2.0, 1000), 1000); // capped
    EXPECT_U64(conv_workspace_bytes(g, 4, 0.0, 1000), 0);    // factor 0: model off
}

int run_conv_workspace_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_a_record),
        cmocka_unit_test(rejects_malformed_records),
        cmocka_unit_test(output_shapes_follow_stride_padding_and_transposition),
        cmocka_unit_test(
            only_ungrouped_unit_stride_spatial_kernels_of_many_channels_get_a_workspace),
    };
    return cmocka_run_group_tests_name("conv_workspace", tests, nullptr, nullptr);
}
