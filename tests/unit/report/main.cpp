// main.cpp — runs one group by name (ctest gives each its own process), or all.
#include "test-list.h"

#include "../common/unit_runner.h"

#define XMEM_REPORT_GROUP_ENTRY(name) XMEM_UNIT_GROUP(name, test_group_##name)
XMEM_UNIT_MAIN("test-report", XMEM_REPORT_TEST_GROUPS, XMEM_REPORT_GROUP_ENTRY)
