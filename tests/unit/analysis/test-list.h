// Registry of every test group of the analysis (trace -> estimate) (libuv's test-list.h habit): one
// line per group. The runner takes a group name; ctest runs each group in its own process.
#pragma once

#define XMEM_ANALYSIS_GROUPS(X)                                                                    \
    X(ops)                                                                                         \
    X(cpu_filter)                                                                                  \
    X(optimizer_foreach)                                                                           \
    X(grad_lifetime)                                                                               \
    X(gemm_copies)                                                                                 \
    X(workspaces)                                                                                  \
    X(conv_workspace)                                                                              \
    X(categorize)                                                                                  \
    X(replay)                                                                                      \
    X(attribution)                                                                                 \
    X(estimate)                                                                                    \
    X(catalog)                                                                                     \
    X(limit)

#define XMEM_ANALYSIS_DECLARE_GROUP(name) int run_##name##_tests(void);
XMEM_ANALYSIS_GROUPS(XMEM_ANALYSIS_DECLARE_GROUP)
