// Runner: `test-trace GROUP` runs one group (as ctest does), `test-trace` runs them all.
#include "test-list.h"

#include "../common/unit_runner.h"

// The simulator's groups are built only when the allocator simulator is.
#ifdef XMEM_TEST_WITH_SIM
#define XMEM_TRACE_GROUPS(X) XMEM_TRACE_CORE_GROUPS(X) XMEM_TRACE_SIM_GROUPS(X)
#else
#define XMEM_TRACE_GROUPS(X) XMEM_TRACE_CORE_GROUPS(X)
#endif

#define XMEM_TRACE_GROUP_ENTRY(name) XMEM_UNIT_GROUP(name, run_##name##_tests)
XMEM_UNIT_MAIN("test-trace", XMEM_TRACE_GROUPS, XMEM_TRACE_GROUP_ENTRY)
