/* test-list.h — every group of the unit tests of the batch-script and Slurm command-line
 * parser the plugin and xmemd share (daemon/script/xmem_script.h); main.c runs one by name. */
#ifndef XMEM_TEST_SCRIPT_LIST_H
#define XMEM_TEST_SCRIPT_LIST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#define XMEM_TEST_GROUPS(X)                                                                        \
    X(cmdline)                                                                                     \
    X(entrypoint)                                                                                  \
    X(preamble)                                                                                    \
    X(shape)

#define XMEM_DECLARE_GROUP(name) int xmem_test_group_##name(void);
XMEM_TEST_GROUPS(XMEM_DECLARE_GROUP)
#undef XMEM_DECLARE_GROUP

#endif
