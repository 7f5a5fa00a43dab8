// Registry of every test group of the trace component (libuv's test-list.h habit): one
// line per group. The runner takes a group name; ctest runs each group in its own process.
#pragma once

#define XMEM_TRACE_CORE_GROUPS(X)                                                                  \
    X(flat_map)                                                                                    \
    X(units)                                                                                       \
    X(compact_reader)                                                                              \
    X(compact_reader_errors)                                                                       \
    X(compact_writer)                                                                              \
    X(snapshot_reader)                                                                             \
    X(timeline)                                                                                    \
    X(fuzz_compact)                                                                                \
    X(fuzz_snapshot)

// Groups that need the allocator simulator (xmem-sim's option parser and replay).
#define XMEM_TRACE_SIM_GROUPS(X)                                                                   \
    X(sim_options)                                                                                 \
    X(segment_check)                                                                               \
    X(replay)

#define XMEM_DECLARE_GROUP(name) int run_##name##_tests(void);
XMEM_TRACE_CORE_GROUPS(XMEM_DECLARE_GROUP)
XMEM_TRACE_SIM_GROUPS(XMEM_DECLARE_GROUP)
