// test-main.cpp — runs one group by name (ctest gives each its own process), or all.
#include "test-list.h"

#include <cstdio>
#include <cstring>

int main(int argc, char **argv)
{
    struct Group {
        const char *name;
        int (*run)(void);
    } groups[] = {
#define X(name) {#name, test_group_##name},
        XMEM_REPORT_TEST_GROUPS(X)
#undef X
    };
    int failed = 0, matched = 0;
    for (const auto &g : groups)
        if (argc < 2 || strcmp(argv[1], g.name) == 0) {
            matched++;
            failed += g.run();
        }
    if (!matched) {
        fprintf(stderr, "xmem-report-unit: no group named %s\n", argc > 1 ? argv[1] : "?");
        return 2;
    }
    return failed ? 1 : 0;
}
