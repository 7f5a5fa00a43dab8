/*
 * enforcement.h — how a packed job is held to its GPU memory share on its node, weakest
 * first (docs/enforcement.md). One definition for the SPANK plugin (which applies the best
 * level its node offers), xmemd (which records it in the ledger and reads the site's
 * required level from xmem.yaml), the report and the policy job_submit.lua loads.
 *
 *   none        nothing holds the job: a share is only a count (gres/shard fences nothing).
 *   client      CUDA_MPS_PINNED_DEVICE_MEM_LIMIT in each task's environment: per process,
 *               and the user can raise it.
 *   mps-server  the legacy MPS control daemon's pinned-memory limit, set by root
 *               (set_default_device_pinned_mem_limit / set_device_pinned_mem_limit): the
 *               user cannot raise it, but it still applies per client process.
 *   dmem        MPS v3's hard limit, the job cgroup's dmem.max: one limit for every process
 *               of the job, the CUDA context included; past it only this job runs out.
 */
#ifndef XMEM_CONTRACT_ENFORCEMENT_H
#define XMEM_CONTRACT_ENFORCEMENT_H

#include <string.h>

enum xmem_enforcement {
    XMEM_ENFORCE_NONE = 0,
    XMEM_ENFORCE_CLIENT = 1,
    XMEM_ENFORCE_MPS_SERVER = 2,
    XMEM_ENFORCE_DMEM = 3,
};
#define XMEM_ENFORCE_LEVELS 4

static const char *const xmem_enforcement_names[XMEM_ENFORCE_LEVELS] = {"none", "client",
                                                                        "mps-server", "dmem"};

/* The level named `name`, or -1 when it names none. */
static inline int xmem_enforcement_parse(const char *name)
{
    for (int i = 0; name != NULL && i < XMEM_ENFORCE_LEVELS; i++)
        if (strcmp(name, xmem_enforcement_names[i]) == 0)
            return i;
    return -1;
}

static inline const char *xmem_enforcement_name(int level)
{
    return level >= 0 && level < XMEM_ENFORCE_LEVELS ? xmem_enforcement_names[level] : "none";
}

#endif
