// Runner: `test-sim GROUP` runs one group (as ctest does), `test-sim` runs them all.
#include "test-list.h"

#include "../common/unit_runner.h"

#define XMEM_SIM_GROUP_ENTRY(name) XMEM_UNIT_GROUP(name, run_##name##_tests)
XMEM_UNIT_MAIN("test-sim", XMEM_SIM_GROUPS, XMEM_SIM_GROUP_ENTRY)
