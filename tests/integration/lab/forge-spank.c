/*
 * forge-spank.c — a hostile client for tests: a SPANK plugin a user could load with their
 * own slurm.conf copy, handing the controller whatever XMEM_* values the FORGE_XMEM_*
 * environment holds. job_submit.lua must not believe any of it without a valid decision.
 * Built by tests/integration/52-slurm-decisions.sh.
 */
#include <stdio.h>
#include <stdlib.h>

#include <slurm/spank.h>

SPANK_PLUGIN(forge, 1);

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    static const char *const vars[] = {"XMEM_MODE",   "XMEM_LIMIT_MB",   "XMEM_DECISION",
                                       "XMEM_ORIGIN", "XMEM_REQUEST_ID", NULL};
    char name[64];

    if (spank_context() != S_CTX_ALLOCATOR)
        return 0;
    for (int i = 0; vars[i] != NULL; i++) {
        const char *v;

        snprintf(name, sizeof(name), "FORGE_%s", vars[i]);
        v = getenv(name);
        if (v != NULL && spank_job_control_setenv(sp, vars[i], v, 1) != ESPANK_SUCCESS)
            return -1;
    }
    return 0;
}
