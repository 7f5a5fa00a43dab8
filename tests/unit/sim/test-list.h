// Registry of every test group of the allocator simulator (libuv's test-list.h habit): one
// line per group. The runner takes a group name; ctest runs each group in its own process.
#pragma once

#define XMEM_SIM_GROUPS(X)                                                                         \
    X(version)                                                                                     \
    X(config)                                                                                      \
    X(rounding)                                                                                    \
    X(malloc)                                                                                      \
    X(free)                                                                                        \
    X(streams)                                                                                     \
    X(release)                                                                                     \
    X(oom)                                                                                         \
    X(gc)                                                                                          \
    X(fraction)                                                                                    \
    X(expandable)                                                                                  \
    X(stats)                                                                                       \
    X(trace)                                                                                       \
    X(internals)                                                                                   \
    X(property)

#define XMEM_SIM_DECLARE_GROUP(name) int run_##name##_tests(void);
XMEM_SIM_GROUPS(XMEM_SIM_DECLARE_GROUP)
