/* test_classify.c — which GPU requests xmem sizes, and the text a decision is bound to. */
#include <string.h>

#include "test-list.h"
#include "classify.h"

static int classify(const char *gres, const char *gpus, const char *per_node, const char *per_task,
                    const char *ntasks, const char *nodes, char *why)
{
    struct xmem_cmdline c;

    memset(&c, 0, sizeof(c));
    c.gres = gres;
    c.gpus = gpus;
    c.gpus_per_node = per_node;
    c.gpus_per_task = per_task;
    c.ntasks = ntasks;
    c.nodes = nodes;
    return xmem_request_classify(&c, why, 256);
}

static void single_gpu_forms(void **state)
{
    char why[256];

    assert_int_equal(classify("gpu:1", NULL, NULL, NULL, NULL, NULL, why), XMEM_REQ_SINGLE);
    assert_int_equal(classify("gpu", NULL, NULL, NULL, NULL, NULL, why), XMEM_REQ_SINGLE);
    assert_int_equal(classify("gpu:a100:1", NULL, NULL, NULL, NULL, NULL, why), XMEM_REQ_SINGLE);
    assert_int_equal(classify(NULL, "1", NULL, NULL, NULL, NULL, why), XMEM_REQ_SINGLE);
    assert_int_equal(classify(NULL, NULL, "1", NULL, NULL, "1", why), XMEM_REQ_SINGLE);
    assert_int_equal(classify(NULL, NULL, NULL, "1", "1", NULL, why), XMEM_REQ_SINGLE);
}

/* The canonical request a decision is bound to (job_submit.lua's xmem.request_shape agrees). */
static const char *canonical(const char *gres, const char *gpus, char *buf, size_t len)
{
    struct xmem_cmdline c;

    memset(&c, 0, sizeof(c));
    c.gres = gres;
    c.gpus = gpus;
    return xmem_request_gpu(&c, buf, len) == 0 ? buf : "(error)";
}

static void canonical_request(void **state)
{
    char buf[96];

    (void)state;
    assert_string_equal(canonical("gpu:1", NULL, buf, sizeof(buf)), "gpu:1");
    assert_string_equal(canonical("gpu", NULL, buf, sizeof(buf)), "gpu:1");
    assert_string_equal(canonical("gres:gpu:a100:1", NULL, buf, sizeof(buf)), "gpu:a100:1");
    assert_string_equal(canonical("nic:1,gpu:a100", NULL, buf, sizeof(buf)), "gpu:a100:1");
    assert_string_equal(canonical(NULL, "1", buf, sizeof(buf)), "gpu:1");
    assert_string_equal(canonical(NULL, "h100:1", buf, sizeof(buf)), "gpu:h100:1");
    assert_string_equal(canonical(NULL, "h100", buf, sizeof(buf)), "gpu:h100:1");
    assert_string_equal(canonical("gpu:a100:1", NULL, buf, 4), "(error)");
    assert_string_equal(canonical("gpu:2", NULL, buf, sizeof(buf)), "gpu:2");
    assert_string_equal(canonical(NULL, NULL, buf, sizeof(buf)), "(error)"); /* no GPU */
}

static void multi_and_none(void **state)
{
    char why[256];

    assert_int_equal(classify("gpu:2", NULL, NULL, NULL, NULL, NULL, why), XMEM_REQ_MULTI);
    assert_non_null(strstr(why, "2 GPUs"));
    assert_int_equal(classify(NULL, NULL, NULL, "1", "4", NULL, why), XMEM_REQ_MULTI);
    assert_int_equal(classify("gpu:1", NULL, NULL, NULL, NULL, "2", why), XMEM_REQ_MULTI);
    assert_non_null(strstr(why, "nodes"));
    assert_int_equal(classify(NULL, NULL, NULL, NULL, NULL, NULL, why), XMEM_REQ_NONE);
    assert_int_equal(classify("shard:3", NULL, NULL, NULL, NULL, NULL, why), XMEM_REQ_SHARED);
    assert_int_equal(classify("gpu:1,mps:50", NULL, NULL, NULL, NULL, NULL, why), XMEM_REQ_SHARED);
}

int xmem_test_group_classify(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(single_gpu_forms),
        cmocka_unit_test(multi_and_none),
        cmocka_unit_test(canonical_request),
    };
    return cmocka_run_group_tests_name("classify", tests, NULL, NULL);
}
