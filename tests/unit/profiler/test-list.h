/* test-list.h — every CMocka group of the capture component; main.cpp runs one by name and
 * ctest runs each group in its own process with a timeout. */
#ifndef XMEM_TEST_PROFILER_LIST_H
#define XMEM_TEST_PROFILER_LIST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

#include <string>

#define XMEM_PROFILER_TEST_GROUPS(X)                                                               \
    X(trace_writer)                                                                                \
    X(recorder)                                                                                    \
    X(profile_options)                                                                             \
    X(child)                                                                                       \
    X(job_spec)                                                                                    \
    X(profile_status)

#define XMEM_DECLARE_GROUP(name) int xmem_test_group_##name(void);
XMEM_PROFILER_TEST_GROUPS(XMEM_DECLARE_GROUP)
#undef XMEM_DECLARE_GROUP

/* Helpers shared by the groups (main.cpp). */
std::string xmem_test_read_file(const std::string &path);
std::string xmem_test_temp_dir(void);

#endif
