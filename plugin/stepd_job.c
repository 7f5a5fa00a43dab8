/*
 * stepd_job.c — what slurmstepd reads of the job it runs: the step's environment, root's
 * record of the job (squeue, once per process), whether this run is a rerun, and the value
 * of the limit variable. remote.c, remote_enforce.c and requeue_step.c share it; it calls
 * none of them.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "defaults.h"
#include "spank_ctx.h"
#include "stepd_job.h"
#include "value.h"

bool xmem__getenv(spank_t sp, const char *name, char *buf, int len)
{
    return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS && buf[0] != '\0';
}

bool xmem__on_share(spank_t sp)
{
    char share[32];

    return xmem__getenv(sp, "SLURM_SHARDS_ON_NODE", share, sizeof(share)) ||
           xmem__getenv(sp, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", share, sizeof(share));
}

/* "0=12288M" or "0=12288M,1=12288M": one entry per device the task sees. */
void xmem__limit_string(const char *visible, unsigned long long mb, char *out, size_t len)
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

int xmem__job_record(spank_t sp, const struct xmem_job_record **r, char *err, size_t errlen)
{
    static struct xmem_job_record record;
    static int state; /* 0: not read yet, 1: read, -1: scontrol failed */
    static char why[256];
    uint32_t job_id = 0;

    if (state == 0) {
        if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) {
            snprintf(why, sizeof(why), "the job id is unknown");
            state = -1;
        } else {
            state = xmem_job_record_query(xmem__settings.squeue, job_id,
                                          XMEM_PLUGIN_SCONTROL_TIMEOUT_MS, &record, why,
                                          sizeof(why)) < 0
                        ? -1
                        : 1;
        }
    }
    if (state < 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    *r = &record;
    return 0;
}

bool xmem__restarted(spank_t sp)
{
    char restarts[16];
    uint64_t n;

    return xmem__getenv(sp, "SLURM_RESTART_COUNT", restarts, sizeof(restarts)) &&
           xmem_decimal_parse(restarts, UINT32_MAX, &n) == 0 && n > 0;
}

bool xmem__rerun(spank_t sp, const struct xmem_job_record *rec)
{
    return xmem__restarted(sp) || rec->restarts > 0;
}
