// Runner: `test-estimate GROUP` runs one group (as ctest does), `test-estimate` runs all.
#include "test-list.h"

#include "../common/unit_runner.h"

#define XMEM_ESTIMATE_GROUP_ENTRY(name) XMEM_UNIT_GROUP(name, run_##name##_tests)
XMEM_UNIT_MAIN("test-estimate", XMEM_ESTIMATE_GROUPS, XMEM_ESTIMATE_GROUP_ENTRY)
