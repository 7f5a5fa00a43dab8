/*
 * remote_enforce.c — slurmstepd, as root, after the job step's first task is forked and
 * before any task execs: hold a packed job to its GPU memory limit with the best level the
 * node offers (enforce.c), remember which, and refuse the job when that is below the level
 * the site requires (docs/enforcement.md).
 *
 * Whether the job is packed, its limit and the required level are root's record's (the
 * packing record job_submit.lua wrote into the AdminComment, read from slurmctld), never the
 * client's SPANK environment's: a forged client that leaves SLURM_SPANK_XMEM_LIMIT_MB out is
 * held all the same. A level that is missing or fails drops to the next one down; client (the
 * variable remote.c sets in each task) is the floor. The job step applies it once for the whole
 * job: dmem holds the job's cgroup, so later steps are inside it, and the MPS default limit holds
 * new servers too.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "defaults.h"
#include "enforce.h"
#include "remote_enforce.h"
#include "requeue.h"
#include "spank_ctx.h"
#include "stepd_job.h"

#ifndef SLURM_BATCH_SCRIPT
#define SLURM_BATCH_SCRIPT 0xfffffffb
#endif

static struct {
    int level;    /* the level applied to this job; -1: not decided in this step */
    bool refused; /* the node is below the required level; the step fails */
} enforced = {-1, false};

bool xmem__enforce_refused(void)
{
    return enforced.refused;
}

int xmem__enforce_stop_task(spank_t sp)
{
    pid_t pid = 0;

    if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || pid <= 1 ||
        kill(pid, SIGKILL) < 0) {
        slurm_error("xmem: cannot stop task pid %d of a refused job; failing the step", (int)pid);
        return -1;
    }
    return 0;
}

const char *xmem__enforce_applied(void)
{
    return enforced.level < 0 ? NULL : xmem_enforcement_name(enforced.level);
}

/* plugstack job_cgroup=PATTERN, else the first task's cgroup cut after job_<id>. */
static int job_cgroup_dir(spank_t sp, uint32_t job_id, char *dir, size_t len)
{
    char path[64], text[4096];
    pid_t pid = 0;
    FILE *f;
    size_t n;

    if (xmem__settings.job_cgroup[0] != '\0')
        return xmem_cgroup_pattern_dir(xmem__settings.job_cgroup, job_id, dir, len);
    if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS)
        return -1;
    snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
    f = fopen(path, "re");
    if (f == NULL)
        return -1;
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return xmem_cgroup_job_dir(text, job_id, xmem__settings.cgroup_root, dir, len);
}

static int apply_dmem(spank_t sp, uint32_t job_id, uint64_t mb, char *err, size_t errlen)
{
    char dir[XMEM_PLUGIN_MAX_CGROUP_PATH];
    struct xmem_dmem_regions regions;

    if (job_cgroup_dir(sp, job_id, dir, sizeof(dir)) < 0) {
        snprintf(err, errlen, "xmem: dmem: the job's cgroup v2 directory was not found");
        return -1;
    }
    if (!xmem_dmem_available(xmem__settings.cgroup_root, dir, &regions)) {
        snprintf(err, errlen,
                 "xmem: dmem: %.160s/dmem.capacity lists no region or %.240s has no dmem.max",
                 xmem__settings.cgroup_root, dir);
        return -1;
    }
    return xmem_dmem_apply(dir, &regions, mb << 20, err, errlen);
}

/* The job's GPUs as the node numbers them: the step's, the job's, else the visible ones. */
static int job_gpus(spank_t sp, char *gpus, int len)
{
    static const char *const names[] = {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS",
                                        "CUDA_VISIBLE_DEVICES"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (xmem__getenv(sp, names[i], gpus, len) && xmem_gpu_list_ok(gpus))
            return 0;
    return -1;
}

static int apply_mps_server(spank_t sp, uint64_t mb, char *err, size_t errlen)
{
    char pipe_dir[1024] = XMEM_PLUGIN_DEFAULT_MPS_PIPE_DIR, gpus[256];
    uid_t uid = 0;

    xmem__getenv(sp, "CUDA_MPS_PIPE_DIRECTORY", pipe_dir, sizeof(pipe_dir));
    if (!xmem_program_found(xmem__settings.mps_control)) {
        snprintf(err, errlen, "xmem: mps-server: %s not found", xmem__settings.mps_control);
        return -1;
    }
    if (!xmem_mps_pipe_ok(pipe_dir)) {
        snprintf(err, errlen, "xmem: mps-server: %s/control is not root's MPS control pipe",
                 pipe_dir);
        return -1;
    }
    if (job_gpus(sp, gpus, sizeof(gpus)) < 0 ||
        spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS) {
        snprintf(err, errlen, "xmem: mps-server: the job's GPUs or uid are unknown");
        return -1;
    }
    return xmem_mps_apply(xmem__settings.mps_control, pipe_dir, gpus, mb, uid, err, errlen);
}

/* Tries one level above client (the variable remote.c sets in each task, the floor). */
static int apply_level(spank_t sp, int level, uint32_t job_id, uint64_t mb, char *err,
                       size_t errlen)
{
    return level == XMEM_ENFORCE_DMEM ? apply_dmem(sp, job_id, mb, err, errlen)
                                      : apply_mps_server(sp, mb, err, errlen);
}

/* The best level at most the site's cap that takes: xmem_enforce_best (enforce.c, unit
 * tested) picks it among the levels not yet seen to fail; each failure drops it from the
 * available ones. Client and none always take. */
static int apply_best(spank_t sp, uint32_t job_id, uint64_t mb)
{
    unsigned available = (1u << XMEM_ENFORCE_LEVELS) - 1; /* every level, until it fails */
    char err[512];
    int level;

    while ((level = xmem_enforce_best(xmem__settings.enforce, available)) > XMEM_ENFORCE_CLIENT) {
        if (apply_level(sp, level, job_id, mb, err, sizeof(err)) == 0)
            return level;
        slurm_info("xmem: job %" PRIu32 ": %s not applied: %s", job_id,
                   xmem_enforcement_name(level), err);
        available &= ~(1u << level);
    }
    return level; /* client, or none when the site's cap is none */
}

/* The limit: root's record's, or the one in the job's environment when smaller (a batch
 * job's CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, which job_submit.lua writes): the environment can
 * only lower it. */
static uint64_t limit_mb(spank_t sp, uint64_t mb)
{
    char text[512];
    uint64_t env;

    if (xmem__getenv(sp, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", text, sizeof(text)) &&
        xmem_pinned_limit_mb(text, &env) == 0 && env > 0 && env < mb)
        return env;
    return mb;
}

/* The step that may stand for the job: the batch step, or step 0 (of a job srun created;
 * step 0 of a batch job is skipped once the record says it is one). */
static bool job_step(spank_t sp)
{
    uint32_t stepid = 1;

    return spank_get_item(sp, S_JOB_STEPID, &stepid) == ESPANK_SUCCESS &&
           (stepid == SLURM_BATCH_SCRIPT || stepid == 0);
}

int xmem__enforce_job(spank_t sp)
{
    char required[32] = "", err[256];
    const struct xmem_job_record *rec;
    struct xmem_record_limit r;
    uint32_t job_id = 0, stepid = 0;
    uint64_t mb;

    /* Other steps matter only to a multi-node batch job (its record says nodes=N), below. */
    if (!job_step(sp) && !xmem__on_share(sp))
        return 0;
    spank_get_item(sp, S_JOB_ID, &job_id);
    spank_get_item(sp, S_JOB_STEPID, &stepid);
    /* Set by job_submit.lua in a batch job's environment when it packed the job under a
     * required level: the client cannot take it out. */
    xmem__getenv(sp, "XMEM_ENFORCE_REQUIRED", required, sizeof(required));
    if (!xmem__on_share(sp) && required[0] == '\0') {
        enforced.level = XMEM_ENFORCE_NONE; /* not packed: a whole GPU, nothing to hold */
        return 0;
    }
    if (xmem__job_record(sp, &rec, err, sizeof(err)) < 0) {
        if (!job_step(sp))
            return 0; /* a later step: only a multi-node job's record would make it hold */
        if (required[0] == '\0') {
            slurm_info("xmem: job %" PRIu32 ": not held to a GPU memory limit: its record "
                       "was not read (%s)",
                       job_id, err);
            return 0;
        }
        enforced.refused = true;
        slurm_error("xmem: job %" PRIu32 ": the packed job's GPU memory limit could not be "
                    "read from slurmctld (%s), the site requires %s: the job does not run "
                    "unenforced",
                    job_id, err, required);
        return -1;
    }
    if (!xmem_record_limit(rec->admin_comment, xmem__rerun(sp, rec), &r) || r.limit_mb == 0) {
        if (!job_step(sp) || (stepid == 0 && rec->batch))
            return 0;
        /* Not packed, or a rerun on a whole GPU: nothing to hold. */
        enforced.level = XMEM_ENFORCE_NONE;
        return 0;
    }
    /* A step of a batch job: its batch step held the job on the batch step's node. A
     * multi-node job's other nodes run only steps, one rank each: every step holds its node
     * (the same limit again where the batch step did; dmem's write is the same value). */
    if (stepid != SLURM_BATCH_SCRIPT && rec->batch && r.nodes <= 1)
        return 0;
    if (!job_step(sp) && !rec->batch)
        return 0; /* a later step of a job srun created: its step 0 held it */
    /* A rerun's limit is the requeue's: the environment still holds the first run's. */
    mb = r.rerun ? r.limit_mb : limit_mb(sp, r.limit_mb);
    enforced.level = apply_best(sp, job_id, mb);
    slurm_info("xmem: job %" PRIu32 ": GPU memory limit %" PRIu64 " MiB enforced by %s", job_id, mb,
               xmem_enforcement_name(enforced.level));
    /* The record's level, written by job_submit.lua when it packed the job; the
     * environment's too, where the record predates it. */
    if (r.required[0] != '\0')
        snprintf(required, sizeof(required), "%s", r.required);
    if (xmem_enforce_meets(enforced.level, required))
        return 0;
    enforced.refused = true;
    slurm_error("xmem: job %" PRIu32 ": this node holds a GPU share only at level %s, the site "
                "requires %s: the packed job does not run here (set up %s on the nodes of this "
                "partition, or declare the level they offer in xmem.yaml)",
                job_id, xmem_enforcement_name(enforced.level), required, required);
    return -1;
}
