/* test-list.h — every CMocka group of the report component, one per module. ctest runs each
 * group in its own process (test-report GROUP) with a timeout. */
#ifndef XMEM_REPORT_TEST_LIST_H
#define XMEM_REPORT_TEST_LIST_H

#define XMEM_REPORT_TEST_GROUPS(X)                                                                 \
    X(dates)                                                                                       \
    X(grouping)                                                                                    \
    X(escaping)                                                                                    \
    X(load)                                                                                        \
    X(calibrate)                                                                                   \
    X(sacct)                                                                                       \
    X(whatif)

#define X(name) int test_group_##name(void);
XMEM_REPORT_TEST_GROUPS(X)
#undef X

#endif
