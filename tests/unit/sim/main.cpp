// Runner: `test-sim GROUP` runs one group (as ctest does), `test-sim` runs them all.
#include <cstdio>
#include <cstring>

#include "test-list.h"

namespace {

struct Group {
    const char* name;
    int (*run)(void);
};

#define XMEM_SIM_GROUP_ENTRY(name) {#name, run_##name##_tests},
const Group k_groups[] = {XMEM_SIM_GROUPS(XMEM_SIM_GROUP_ENTRY)};

}  // namespace

int main(int argc, char** argv) {
    int failed = 0;
    bool found = false;
    for (const Group& g : k_groups) {
        if (argc > 1 && std::strcmp(argv[1], g.name) != 0) continue;
        found = true;
        failed += g.run();
    }
    if (!found) {
        std::fprintf(stderr, "test-sim: no test group '%s'\n", argc > 1 ? argv[1] : "");
        return 2;
    }
    return failed ? 1 : 0;
}
