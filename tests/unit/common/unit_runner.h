/* unit_runner.h — the main() of every unit-test binary (C and C++), from its X-macro group
 * list (test-list.h). `PROGRAM GROUP` runs one group, as ctest does (one process per group);
 * `PROGRAM` alone runs them all. Exit status: 0 all passed, 1 a test failed, 2 no group has
 * that name (one line on stderr naming the program).
 *
 * Use, in the component's main file:
 *     #define GROUP_ENTRY(name) XMEM_UNIT_GROUP(name, run_##name##_tests)
 *     XMEM_UNIT_MAIN("test-sim", XMEM_SIM_GROUPS, GROUP_ENTRY)
 */
#ifndef XMEM_UNIT_RUNNER_H
#define XMEM_UNIT_RUNNER_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct xmem_unit_group {
    const char *name;
    int (*run)(void);
};

/* One array element: the group's name as ctest passes it, and the function that runs it. */
#define XMEM_UNIT_GROUP(name, fn) {#name, fn},

static inline int xmem_unit_run(const char *program, const struct xmem_unit_group *groups,
                                size_t count, int argc, char **argv)
{
    int failed = 0, found = 0;
    for (size_t i = 0; i < count; i++) {
        if (argc > 1 && strcmp(argv[1], groups[i].name) != 0)
            continue;
        found = 1;
        failed += groups[i].run();
    }
    if (!found) {
        fprintf(stderr, "%s: no test group '%s'\n", program, argc > 1 ? argv[1] : "");
        return 2;
    }
    return failed ? 1 : 0;
}

/* Defines main() over GROUPS(ENTRY), where ENTRY(name) expands to XMEM_UNIT_GROUP(...). */
#define XMEM_UNIT_MAIN(program, groups_x, entry_x)                                                 \
    static const struct xmem_unit_group xmem_unit_groups[] = {groups_x(entry_x)};                  \
    int main(int argc, char **argv)                                                                \
    {                                                                                              \
        return xmem_unit_run(program, xmem_unit_groups,                                            \
                             sizeof xmem_unit_groups / sizeof xmem_unit_groups[0], argc, argv);    \
    }

#endif
