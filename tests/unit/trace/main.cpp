// Runner: `test-trace GROUP` runs one group (as ctest does), `test-trace` runs them all.
#include "test-list.h"

#include <cstdio>
#include <cstring>

namespace {

struct Group {
    const char *name;
    int (*run)(void);
};

#define XMEM_GROUP_ENTRY(name) {#name, run_##name##_tests},
const Group k_groups[] = {
    XMEM_TRACE_CORE_GROUPS(XMEM_GROUP_ENTRY)
#ifdef XMEM_TEST_WITH_SIM
    XMEM_TRACE_SIM_GROUPS(XMEM_GROUP_ENTRY)
#endif
};

} // namespace

int main(int argc, char **argv)
{
    int failed = 0;
    bool found = false;
    for (const Group &g : k_groups) {
        if (argc > 1 && std::strcmp(argv[1], g.name) != 0)
            continue;
        found = true;
        failed += g.run();
    }
    if (!found) {
        std::fprintf(stderr, "test-trace: no test group '%s'\n", argc > 1 ? argv[1] : "");
        return 2;
    }
    return failed ? 1 : 0;
}
