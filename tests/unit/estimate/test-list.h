// Registry of every test group of the estimator (libuv's test-list.h habit): one line per
// group. The runner takes a group name; ctest runs each group in its own process.
#pragma once

#define XMEM_ESTIMATE_GROUPS(X) \
    X(ops)                      \
    X(cpu_filter)               \
    X(optimizer_foreach)        \
    X(grad_lifetime)            \
    X(workspaces)               \
    X(conv_workspace)           \
    X(categorize)               \
    X(replay)                   \
    X(estimate)                 \
    X(catalog)                  \
    X(options)                  \
    X(limit)

#define XMEM_ESTIMATE_DECLARE_GROUP(name) int run_##name##_tests(void);
XMEM_ESTIMATE_GROUPS(XMEM_ESTIMATE_DECLARE_GROUP)
