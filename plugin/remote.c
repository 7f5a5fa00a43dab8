/*
 * remote.c — slurmstepd: give every task of a resized job its MPS memory limit, and at the
 * end of the job tell the node's xmemd how it went (accounting, best effort).
 *
 * The decision arrives as SLURM_SPANK_XMEM_* in the step's SPANK environment. The limit is
 * set only when the job runs on a share (shard or mps): a job that kept its whole GPU, or
 * was only checked, runs unconstrained.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <slurm/spank.h>

#include "defaults.h"
#include "spank_ctx.h"
#include "xmem_client.h"

#ifndef SLURM_BATCH_SCRIPT
#define SLURM_BATCH_SCRIPT 0xfffffffb
#endif

static struct {
    time_t start;
    int worst_exit;  /* largest task exit code; 128+signal for a killed task */
    int saw_task;
} step;

int xmem__remote_init(spank_t sp)
{
    step.start = time(NULL);
    step.worst_exit = 0;
    step.saw_task = 0;
    return 0;
}

static int getenv_sp(spank_t sp, const char *name, char *buf, int len)
{
    return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS && buf[0] != '\0';
}

/* "0=12288M" or "0=12288M,1=12288M": one entry per device the task sees. */
static void limit_string(const char *visible, unsigned long long mb, char *out, size_t len)
{
    int ndev = 1;

    if (visible != NULL && visible[0] != '\0')
        for (const char *p = visible; *p; p++)
            ndev += *p == ',';
    out[0] = '\0';
    for (int i = 0; i < ndev; i++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%d=%lluM", i ? "," : "", i, mb);
    }
}

int xmem__remote_task_init(spank_t sp)
{
    char mode[32], mb[32], share[32], visible[256] = "", limit[512], existing[512];
    unsigned long long v;
    char *end;

    if (!getenv_sp(sp, "SLURM_SPANK_XMEM_LIMIT_MB", mb, sizeof(mb)))
        return 0;
    if (getenv_sp(sp, "SLURM_SPANK_XMEM_MODE", mode, sizeof(mode)) && strcmp(mode, "check") == 0)
        return 0;
    /* Only a job that runs on a share is held to its estimate. */
    if (!getenv_sp(sp, "SLURM_SHARDS_ON_NODE", share, sizeof(share)) &&
        !getenv_sp(sp, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", share, sizeof(share)))
        return 0;
    /* job_submit.lua may have set the limit it applied (with the site margin): it wins. */
    if (getenv_sp(sp, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", existing, sizeof(existing)))
        return 0;
    v = strtoull(mb, &end, 10);
    if (end == mb || *end != '\0' || v == 0) {
        slurm_error("xmem: ignoring a malformed SLURM_SPANK_XMEM_LIMIT_MB=%s", mb);
        return 0;
    }
    getenv_sp(sp, "CUDA_VISIBLE_DEVICES", visible, sizeof(visible));
    limit_string(visible, v, limit, sizeof(limit));
    if (spank_setenv(sp, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", limit, 1) != ESPANK_SUCCESS)
        slurm_error("xmem: cannot set CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=%s for the task", limit);
    return 0;
}

int xmem__remote_task_exit(spank_t sp)
{
    int status = 0, code;

    if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS)
        return 0;
    code = WIFEXITED(status) ? WEXITSTATUS(status)
                             : (WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 0);
    if (!step.saw_task || code > step.worst_exit)
        step.worst_exit = code;
    step.saw_task = 1;
    return 0;
}

/* The step that stands for the whole job: the batch step of a batch job, step 0 of a job
 * that srun created. */
static int is_job_step(spank_t sp)
{
    uint32_t stepid = 0;
    char origin[32] = "";

    if (spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS)
        return 0;
    if (stepid == SLURM_BATCH_SCRIPT)
        return 1;
    getenv_sp(sp, "SLURM_SPANK_XMEM_ORIGIN", origin, sizeof(origin));
    return stepid == 0 && strcmp(origin, "srun") == 0;
}

int xmem__remote_exit(spank_t sp)
{
    char rid[32], err[512];
    uint32_t jobid = 0;
    uint64_t request_id;
    char *end;

    if (!getenv_sp(sp, "SLURM_SPANK_XMEM_REQUEST_ID", rid, sizeof(rid)) || !is_job_step(sp))
        return 0;
    request_id = strtoull(rid, &end, 10);
    if (end == rid || *end != '\0' || request_id == 0)
        return 0;
    if (spank_get_item(sp, S_JOB_ID, &jobid) != ESPANK_SUCCESS)
        return 0;
    if (xmem_client_job_end(xmem__settings.socket, XMEM_PLUGIN_JOB_END_TIMEOUT_S * 1000,
                            request_id, jobid, step.worst_exit,
                            (uint64_t)(time(NULL) - step.start), 0, err, sizeof(err)) != 0)
        slurm_info("xmem: job %" PRIu32 " end not recorded: %s", jobid, err);
    return 0; /* accounting never fails a job */
}
