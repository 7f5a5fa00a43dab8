/*
 * xmem.c — the SPANK entry points of xmem.so: the only SPANK_PLUGIN line, the one option
 * table, and a dispatch by spank_context() to one file per context.
 *
 *   allocator (sbatch, salloc) and local (srun)  → allocator.c
 *   remote (slurmstepd)                          → remote.c
 */
#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "spank_ctx.h"

#ifndef XMEM_VERSION
#define XMEM_VERSION "unknown"
#endif

SPANK_PLUGIN(xmem, 1);

struct xmem_settings xmem__settings;

static int xmem_option_cb(int val, const char *optarg, int remote);

static struct spank_option xmem_options[] = {
    {"xmem", "[MODE]",
     "[xmem] Size the GPU request from the job's memory: bare or 'auto' profiles the "
     "training entrypoint and requests a matching GPU share; 'check' only reports; 'off' "
     "disables; a size such as '12G' declares a budget without profiling.",
     2, 0, xmem_option_cb},
    SPANK_OPTIONS_TABLE_END,
};

static int xmem_option_cb(int val, const char *optarg, int remote)
{
    struct xmem_value v;
    char err[256];

    if (xmem_value_parse(optarg, &v, err, sizeof(err)) < 0) {
        slurm_error("%s", err);
        return -1;
    }
    if (remote)
        return 0; /* slurmstepd reads the decision from the job's SPANK environment */
    switch (spank_context()) {
    case S_CTX_ALLOCATOR:
    case S_CTX_LOCAL:
        return xmem__allocator_option(&v, optarg);
    default:
        return 0;
    }
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    char err[512] = "";
    spank_context_t ctx = spank_context();

    if (ctx == S_CTX_SLURMD)
        slurm_info("xmem: SPANK plugin %s loaded", XMEM_VERSION);
    if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE)
        return 0;
    xmem_settings_init(&xmem__settings);
    if (xmem_settings_parse(&xmem__settings, ac, av, err, sizeof(err)) < 0) {
        slurm_error("%s", err);
        return -1;
    }
    if (spank_option_register(sp, &xmem_options[0]) != ESPANK_SUCCESS) {
        slurm_error("xmem: cannot register the --xmem option");
        return -1;
    }
    if (ctx == S_CTX_REMOTE)
        return xmem__remote_init(sp);
    return xmem__allocator_init();
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    switch (spank_context()) {
    case S_CTX_ALLOCATOR:
    case S_CTX_LOCAL:
        return xmem__allocator_post_opt(sp);
    default:
        return 0;
    }
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    return spank_context() == S_CTX_REMOTE ? xmem__remote_task_init(sp) : 0;
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
    return spank_context() == S_CTX_REMOTE ? xmem__remote_task_post_fork(sp) : 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
    return spank_context() == S_CTX_REMOTE ? xmem__remote_task_exit(sp) : 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    return spank_context() == S_CTX_REMOTE ? xmem__remote_exit(sp) : 0;
}
