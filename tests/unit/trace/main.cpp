// Runner: `test-trace GROUP` runs one group (as ctest does), `test-trace` runs them all.
#include "test-list.h"

#include "../common/unit_runner.h"

#define XMEM_TRACE_GROUPS(X) XMEM_TRACE_CORE_GROUPS(X) XMEM_TRACE_SIM_GROUPS(X)

#define XMEM_TRACE_GROUP_ENTRY(name) XMEM_UNIT_GROUP(name, run_##name##_tests)
XMEM_UNIT_MAIN("test-trace", XMEM_TRACE_GROUPS, XMEM_TRACE_GROUP_ENTRY)
