/* test-list.h — every group of the plugin's unit tests; main.c runs one by name. */
#ifndef XMEM_TEST_PLUGIN_LIST_H
#define XMEM_TEST_PLUGIN_LIST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#define XMEM_TEST_GROUPS(X)                                                                        \
    X(value)                                                                                       \
    X(settings)                                                                                    \
    X(classify)                                                                                    \
    X(export)                                                                                      \
    X(oom)                                                                                         \
    X(jobinfo)                                                                                     \
    X(sampler)                                                                                     \
    X(enforce)                                                                                     \
    X(requeue)

#define XMEM_DECLARE_GROUP(name) int xmem_test_group_##name(void);
XMEM_TEST_GROUPS(XMEM_DECLARE_GROUP)
#undef XMEM_DECLARE_GROUP

#endif
