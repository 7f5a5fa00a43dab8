/*
 * remote.c — slurmstepd: give every task of a resized job its MPS memory limit, and at the
 * end of the job tell the node's xmemd how it went (accounting, best effort).
 *
 * Whether xmem packed the job, its limit and the site's required level come from root's
 * record of the job, the packing record job_submit.lua wrote into its AdminComment (read
 * from slurmctld), never from SLURM_SPANK_XMEM_* in the step's environment, which the
 * submitting client wrote. Only a job that runs on a share (shard or mps) is looked at: a job
 * that kept its whole GPU, or was only checked, runs unconstrained. The variable is the
 * weakest way to hold the job to its limit; the step that stands for the job applies the
 * best one its node offers when its first task is forked (remote_enforce.c,
 * docs/enforcement.md), the only thing here that may stop a job: below the site's required
 * level.
 *
 * In the step that stands for the whole job, a thread samples the job's GPU memory through
 * NVML from the last task's fork to the step's end (nvml.c); at the end the job's output
 * files are scanned for a CUDA OOM (jobinfo.c, oom.c), and all of it goes to xmemd with the
 * job's account and partition. xmemd answers with the job's accounting record, which goes
 * into the job's AdminComment (acct.h) for slurmdbd. None of this can fail the job: problems
 * are logged at debug level (a node without NVML is normal) or info (something that should
 * have worked).
 */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <slurm/spank.h>

#include "acct.h"
#include "defaults.h"
#include "jobinfo.h"
#include "nvml.h"
#include "oom.h"
#include "remote_enforce.h"
#include "requeue.h"
#include "requeue_step.h"
#include "run.h"
#include "spank_ctx.h"
#include "stepd_job.h"
#include "value.h"
#include "xmem_client.h"
#include "../daemon/contract/enforcement.h"

#ifndef SLURM_BATCH_SCRIPT
#define SLURM_BATCH_SCRIPT 0xfffffffb
#endif

static struct {
    time_t start;
    int worst_exit; /* largest task exit code; 128+signal for a killed task */
    int saw_task;
    int sampler_tried;
    struct xmem_sampler *sampler; /* NULL: not sampling */
} step;

int xmem__remote_init(spank_t sp)
{
    step.start = time(NULL);
    step.worst_exit = 0;
    step.saw_task = 0;
    step.sampler_tried = 0;
    step.sampler = NULL;
    return 0;
}

static bool is_job_step(spank_t sp);
static int request_id(spank_t sp, uint64_t *id);

/* A job that waited held for its estimate (docs/async.md) gets one line in its output, from
 * its batch step: the share it was given, or why it keeps its request. The record is root's. */
static void tell_held(spank_t sp, const char *record)
{
    char pending[32];
    uint32_t stepid = 0;

    if (!xmem__getenv(sp, "SLURM_SPANK_XMEM_PENDING", pending, sizeof(pending)) ||
        spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS || stepid != SLURM_BATCH_SCRIPT)
        return;
    if (strncmp(record, "xmem: estimating ", 17) == 0)
        fprintf(stderr, "xmem: released at the held deadline without an estimate; the job runs "
                        "on a whole GPU's share\n");
    else
        fprintf(stderr, "%s\n", record);
}

/* Each task of a job xmem packed gets CUDA_MPS_PINNED_DEVICE_MEM_LIMIT (the client level,
 * the floor of the others: docs/enforcement.md) with the limit of root's record; a rerun
 * that xmem requeued after an OOM gets the requeue's instead (requeue_step.c). The variable
 * is the user's to keep anyway (it is their environment): whether to read the record is
 * decided from the step's environment, so that a share job xmem never saw costs no scontrol
 * call per task; what the limit is never is. */
int xmem__remote_task_init(spank_t sp)
{
    char visible[256] = "", limit[512], existing[512], mode[32], err[256];
    const struct xmem_job_record *rec;
    struct xmem_record_limit r;
    bool restarted, has;

    if (!xmem__on_share(sp)) /* xmem packs onto shares only */
        return 0;
    restarted = xmem__restarted(sp);
    /* job_submit.lua set the limit it applied in a batch job's environment: it stays, unless
     * this is a rerun, which only the record can tell in task_post_fork. */
    has = xmem__getenv(sp, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", existing, sizeof(existing));
    if (!restarted && !has && !xmem__getenv(sp, "SLURM_SPANK_XMEM_MODE", mode, sizeof(mode)))
        return 0;
    if (xmem__job_record(sp, &rec, err, sizeof(err)) < 0) {
        slurm_debug("xmem: the job's record was not read: %s", err);
        return 0;
    }
    /* A rerun after a CUDA OOM: the old limit goes, and its output gets the one line. */
    if (xmem__requeue_task_init(sp, rec))
        return 0;
    if (!restarted)
        tell_held(sp, rec->admin_comment);
    if (has || xmem__settings.enforce == XMEM_ENFORCE_NONE ||
        !xmem_record_limit(rec->admin_comment, false, &r) || r.limit_mb == 0)
        return 0;
    xmem__getenv(sp, "CUDA_VISIBLE_DEVICES", visible, sizeof(visible));
    xmem__limit_string(visible, r.limit_mb, limit, sizeof(limit));
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

/* Holds the job to its limit once its first task is forked, before any task execs (tasks
 * wait until every post_fork has run); a node below the required level kills each task of
 * the job before it execs (remote_enforce.c). Then starts sampling once the last local task
 * is forked: from then on slurmstepd forks no more tasks while our thread runs, and no task
 * has exec'd its program yet. */
int xmem__remote_task_post_fork(spank_t sp)
{
    struct xmem_sampler_config cfg = {0};
    uint32_t ntasks = 0;
    int task = -1;
    uint64_t rid;
    char err[256];

    spank_get_item(sp, S_TASK_ID, &task);
    if (task == 0)
        xmem__enforce_job(sp);
    if (xmem__enforce_refused()) /* every task of a refused job, none execs */
        return xmem__enforce_stop_task(sp);
    if (step.sampler_tried || strcmp(xmem__settings.nvml, "off") == 0)
        return 0;
    if (task >= 0 && spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks) == ESPANK_SUCCESS &&
        task + 1 < (int)ntasks)
        return 0;
    step.sampler_tried = 1;
    if (request_id(sp, &rid) < 0 || !is_job_step(sp) ||
        spank_get_item(sp, S_JOB_ID, &cfg.job_id) != ESPANK_SUCCESS)
        return 0;
    snprintf(cfg.library, sizeof(cfg.library), "%s", xmem__settings.nvml);
    cfg.interval_ms = xmem__settings.nvml_interval_ms;
    cfg.ancestor = getpid();
    if (xmem_sampler_start(&cfg, &step.sampler, err, sizeof(err)) < 0)
        slurm_info("%s", err);
    return 0;
}

/* The step that stands for the whole job: the batch step of a batch job, step 0 of a job
 * that srun created. */
static bool is_job_step(spank_t sp)
{
    uint32_t stepid = 0;
    char origin[32] = "";

    if (spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS)
        return false;
    if (stepid == SLURM_BATCH_SCRIPT)
        return true;
    xmem__getenv(sp, "SLURM_SPANK_XMEM_ORIGIN", origin, sizeof(origin));
    return stepid == 0 && strcmp(origin, "srun") == 0;
}

/* The xmem request the job ran under, from the decision in its SPANK environment. */
static int request_id(spank_t sp, uint64_t *id)
{
    char rid[32];

    if (!xmem__getenv(sp, "SLURM_SPANK_XMEM_REQUEST_ID", rid, sizeof(rid)) ||
        xmem_decimal_parse(rid, UINT64_MAX, id) < 0 || *id == 0)
        return -1;
    return 0;
}

/* The largest sum of the job's GPU memory, when NVML measured any. */
static void measured_peak(struct xmem_job_end *job)
{
    char why[320];

    job->has_measured_peak = xmem_sampler_stop(step.sampler, XMEM_PLUGIN_NVML_JOIN_TIMEOUT_MS,
                                               &job->measured_peak_bytes, why, sizeof(why));
    step.sampler = NULL;
    if (!job->has_measured_peak && why[0] != '\0')
        slurm_debug("%s", why);
}

/* Scans stdout and stderr (once when they are the same file) as the job's user. */
static bool output_shows_oom(const struct xmem_job_info *info, uid_t uid)
{
    const char *paths[] = {info->std_err, info->std_out};
    char err[512];
    int found = 0;

    for (int i = 0; i < 2 && !found; i++) {
        if (paths[i][0] == '\0' || (i == 1 && strcmp(paths[0], paths[1]) == 0))
            continue;
        if (xmem_oom_scan_file(paths[i], uid, &found, err, sizeof(err)) < 0)
            slurm_debug("%s", err);
    }
    return found;
}

/* Account and partition: slurmctld's word when it was unambiguous, else the job's
 * environment (SLURM_JOB_ACCOUNT / SLURM_JOB_PARTITION). */
static void account_partition(spank_t sp, struct xmem_job_info *info)
{
    if (info->account[0] == '\0')
        xmem__getenv(sp, "SLURM_JOB_ACCOUNT", info->account, sizeof(info->account));
    if (info->partition[0] == '\0')
        xmem__getenv(sp, "SLURM_JOB_PARTITION", info->partition, sizeof(info->partition));
}

/* The share this run was packed on, from root's AdminComment as the job end found it (a
 * rerun's is the requeue mark's), and the part of one GPU it is on this node's GRES. */
static void granted_share(const struct xmem_job_info *info, struct xmem_job_end *job, char *share,
                          size_t len)
{
    struct xmem_packed packed;
    struct xmem_requeue_plan plan;
    struct xmem_share s;

    if (!xmem_comment_packed(info->admin_comment, &packed))
        return;
    /* Root's figures, so that an xmemd that does not hold the request (another login node's)
     * can still write the job's accounting record for slurmdbd. */
    job->packed_limit_bytes = packed.limit_mb << 20;
    job->packed_estimate_bytes = packed.estimate_mb << 20;
    s = xmem_requeue_mark_parse(info->admin_comment, &plan) == 0 ? plan.to : packed.share;
    if (xmem_acct_fraction(s.count, xmem__share_per_gpu(info->node_list, s.kind),
                           &job->gpu_fraction) < 0) {
        slurm_debug("xmem: job %" PRIu32 ": the part of a GPU %s:%u is was not found", job->job_id,
                    s.kind, s.count);
        return;
    }
    snprintf(share, len, "%s:%u", s.kind, s.count);
    job->share = share;
}

/* Appends the record to the AdminComment, read again (a requeue may just have marked it).
 * As root, while the job still runs: slurmctld hands it to slurmdbd at completion, and
 * refuses updates of a finished job. */
static void write_record(uint32_t job_id, const char *record)
{
    static struct xmem_job_record rec;
    static struct xmem_requeue_argv a;
    char comment[sizeof(a.value) - 16], out[256], err[512];

    a.job_id = job_id;
    if (xmem_job_record_query(xmem__settings.squeue, job_id, XMEM_PLUGIN_SCONTROL_TIMEOUT_MS, &rec,
                              err, sizeof(err)) < 0) {
        slurm_info("xmem: job %" PRIu32 ": accounting record not written: %s", job_id, err);
        return;
    }
    /* The same step as the requeue mark: scontrol update JobId=N AdminComment=... */
    if (xmem_acct_comment(rec.admin_comment, record, comment, sizeof(comment)) < 0 ||
        xmem_requeue_argv(xmem__settings.scontrol, XMEM_REQUEUE_STEP_MARK, comment, &a) < 0) {
        slurm_info("xmem: job %" PRIu32 ": accounting record not written: the AdminComment "
                   "is too long to add it",
                   job_id);
        return;
    }
    if (xmem_run_capture(a.argv, XMEM_PLUGIN_SCONTROL_TIMEOUT_MS, out, sizeof(out), err,
                         sizeof(err)) < 0)
        slurm_info("xmem: job %" PRIu32 ": accounting record not written: %s", job_id, err);
}

int xmem__remote_exit(spank_t sp)
{
    static struct xmem_job_info info; /* 8 KiB of paths: off slurmstepd's stack */
    static char record[1024];
    struct xmem_job_end job = {.record = record, .record_len = sizeof(record)};
    uid_t uid = 0;
    char err[512], share[40];

    measured_peak(&job); /* always stop the thread, whatever else fails */
    if (request_id(sp, &job.request_id) < 0 || !is_job_step(sp))
        return 0;
    if (spank_get_item(sp, S_JOB_ID, &job.job_id) != ESPANK_SUCCESS)
        return 0;
    if (xmem_job_info_query(xmem__settings.scontrol, job.job_id, XMEM_PLUGIN_SCONTROL_TIMEOUT_MS,
                            &info, err, sizeof(err)) < 0)
        slurm_info("xmem: job %" PRIu32 ": output not scanned for CUDA OOM: %s", job.job_id, err);
    if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS) {
        job.cuda_oom = output_shows_oom(&info, uid);
        job.oom_requeued = xmem__requeue_after_oom(sp, job.job_id, &info, job.cuda_oom);
        /* The request id came from the job's environment, which its user controls: xmemd
         * records the report only if that request is this uid's. */
        job.has_job_uid = 1;
        job.job_uid = (uint32_t)uid;
    }
    /* Refused on a node below the site's required level: it runs again whole, from the job
     * info read above (its mark, if any, refuses a second requeue). */
    if (xmem__enforce_refused() && !job.oom_requeued)
        xmem__requeue_whole(job.job_id, &info, "the node cannot enforce the required level");
    account_partition(sp, &info);
    job.account = info.account;
    job.partition = info.partition;
    job.exit_status = step.worst_exit;
    job.enforcement = xmem__enforce_applied();
    job.elapsed_seconds = (uint64_t)(time(NULL) - step.start);
    granted_share(&info, &job, share, sizeof(share));
    if (xmem_client_job_end(xmem__settings.socket, XMEM_PLUGIN_JOB_END_TIMEOUT_S * 1000, &job, err,
                            sizeof(err)) != 0)
        slurm_info("xmem: job %" PRIu32 " end not recorded: %s", job.job_id, err);
    else if (record[0] != '\0')
        write_record(job.job_id, record);
    return 0; /* accounting never fails a job */
}
