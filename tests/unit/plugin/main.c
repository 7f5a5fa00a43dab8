/* main.c — runs the plugin test group named on the command line (or all of them). */
#include <stdio.h>
#include <string.h>

#include "test-list.h"

static const struct {
    const char *name;
    int (*run)(void);
} groups[] = {
#define XMEM_ENTRY(name) {#name, xmem_test_group_##name},
    XMEM_TEST_GROUPS(XMEM_ENTRY)
#undef XMEM_ENTRY
};

int main(int argc, char **argv)
{
    int failed = 0, found = 0;

    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
        if (argc > 1 && strcmp(argv[1], groups[i].name) != 0)
            continue;
        found = 1;
        failed += groups[i].run();
    }
    if (!found) {
        fprintf(stderr, "xmem-test-plugin: no test group '%s'\n", argv[1]);
        return 2;
    }
    return failed ? 1 : 0;
}
