// Runner: `test-analysis GROUP` runs one group (as ctest does), `test-analysis` runs all.
#include "test-list.h"

#include "../common/unit_runner.h"

#define XMEM_ANALYSIS_GROUP_ENTRY(name) XMEM_UNIT_GROUP(name, run_##name##_tests)
XMEM_UNIT_MAIN("test-analysis", XMEM_ANALYSIS_GROUPS, XMEM_ANALYSIS_GROUP_ENTRY)
