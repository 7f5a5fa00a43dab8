/* main.c — runs the script-parser test group named on the command line (or all of them). */
#include "test-list.h"

#include "../common/unit_runner.h"

#define XMEM_SCRIPT_GROUP_ENTRY(name) XMEM_UNIT_GROUP(name, xmem_test_group_##name)
XMEM_UNIT_MAIN("test-script", XMEM_TEST_GROUPS, XMEM_SCRIPT_GROUP_ENTRY)
