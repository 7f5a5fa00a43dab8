/* main.c — runs the plugin test group named on the command line (or all of them). */
#include "test-list.h"

#include "../common/unit_runner.h"

#define XMEM_PLUGIN_GROUP_ENTRY(name) XMEM_UNIT_GROUP(name, xmem_test_group_##name)
XMEM_UNIT_MAIN("test-plugin", XMEM_TEST_GROUPS, XMEM_PLUGIN_GROUP_ENTRY)
