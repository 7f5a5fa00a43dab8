/*
 * requeue_step.c — slurmstepd's side of the requeue after a CUDA OOM on a share (requeue.c
 * decides, docs/enforcement.md "After an OOM"):
 *   - at the end of the job (remote.c, as root): mark the AdminComment (root's; the user's
 *     Comment is never read), `scontrol requeuehold`,
 *     set the rerun's share, release, give back the priority;
 *   - in each task of the rerun (task_init, as the user): lift the first run's memory limit
 *     (or set the larger one) and, in the batch step, print one line to the job's stderr:
 *     Slurm 22.05 truncates the output files when a requeued job starts again, so a line
 *     written by the first run would not survive.
 * The job id comes from SPANK, never from the job's environment; scontrol runs from an argv
 * (no shell) under a deadline.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "defaults.h"
#include "jobinfo.h"
#include "requeue.h"
#include "requeue_step.h"
#include "run.h"
#include "spank_ctx.h"
#include "stepd_job.h"

#ifndef SLURM_BATCH_SCRIPT
#define SLURM_BATCH_SCRIPT 0xfffffffb
#endif

static int scontrol(uint32_t job_id, enum xmem_requeue_step step, const char *arg, char *err,
                    size_t errlen)
{
    struct xmem_requeue_argv a = {.job_id = job_id};
    char out[512];

    if (xmem_requeue_argv(xmem__settings.scontrol, step, arg, &a) < 0) {
        snprintf(err, errlen, "xmem: the job's AdminComment is too long to add the requeue mark");
        return -1;
    }
    return xmem_run_capture(a.argv, XMEM_PLUGIN_SCONTROL_TIMEOUT_MS, out, sizeof(out), err, errlen);
}

unsigned xmem__share_per_gpu(const char *nodes, const char *kind)
{
    char out[8192], err[256];
    char *argv[] = {xmem__settings.scontrol, "show", "node", (char *)nodes, NULL};
    unsigned per_gpu = 0;

    /* A node or a hostlist (gpu[1-2]: a multi-node job), never an option. */
    if (nodes[0] == '\0' || nodes[0] == '-' ||
        strspn(nodes, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "0123456789._-[],") != strlen(nodes))
        return 0;
    if (xmem_run_capture(argv, XMEM_PLUGIN_SCONTROL_TIMEOUT_MS, out, sizeof(out), err,
                         sizeof(err)) < 0)
        return 0;
    return xmem_nodes_share_per_gpu(out, kind, &per_gpu) == 0 ? per_gpu : 0;
}

/* Runs the plan: mark first (a failure later must never lead to a second requeue). */
static int requeue(uint32_t job_id, const struct xmem_job_info *info,
                   const struct xmem_requeue_plan *plan)
{
    char mark[256], record[2600], share[40], prio[16], err[512];

    if (xmem_requeue_mark_format(plan, mark, sizeof(mark)) < 0)
        return -1;
    snprintf(record, sizeof(record), "%s%s%s", info->admin_comment,
             info->admin_comment[0] ? "; " : "", mark);
    snprintf(share, sizeof(share), "%s:%u", plan->to.kind, plan->to.count);
    if (scontrol(job_id, XMEM_REQUEUE_STEP_MARK, record, err, sizeof(err)) < 0 ||
        scontrol(job_id, XMEM_REQUEUE_STEP_HOLD, NULL, err, sizeof(err)) < 0) {
        slurm_info("xmem: job %" PRIu32 " not requeued: %s", job_id, err);
        return -1;
    }
    /* Held until its share is set: no scheduler pass can start it on the old one. */
    if (scontrol(job_id, XMEM_REQUEUE_STEP_SHARE, share, err, sizeof(err)) < 0 ||
        scontrol(job_id, XMEM_REQUEUE_STEP_RELEASE, NULL, err, sizeof(err)) < 0) {
        slurm_info("xmem: job %" PRIu32 " requeued but left held (scontrol release %" PRIu32
                   " starts it): %s",
                   job_id, job_id, err);
        return 0;
    }
    snprintf(prio, sizeof(prio), "%" PRIu32, info->priority);
    if (info->priority > 0 &&
        scontrol(job_id, XMEM_REQUEUE_STEP_PRIORITY, prio, err, sizeof(err)) < 0)
        slurm_debug("xmem: job %" PRIu32 ": priority not restored: %s", job_id, err);
    slurm_info("xmem: job %" PRIu32 " requeued after %s on gres:%s:%u: rerun on gres:%s", job_id,
               plan->reason, plan->from.kind, plan->from.count, share);
    return 0;
}

/* The facts slurmctld gives (info) plus the node's shares per GPU for the job's kind. */
static void facts_from(const struct xmem_job_info *info, struct xmem_requeue_facts *f)
{
    struct xmem_packed packed;

    f->batch = info->batch;
    f->admin_comment = info->admin_comment;
    f->tres_per_node = info->tres_per_node;
    f->per_gpu = 0;
    if (xmem_comment_packed(info->admin_comment, &packed))
        f->per_gpu = xmem__share_per_gpu(info->node_list, packed.share.kind);
}

bool xmem__requeue_after_oom(spank_t sp, uint32_t job_id, const struct xmem_job_info *info,
                             bool cuda_oom)
{
    struct xmem_requeue_facts f = {.cuda_oom = cuda_oom};
    struct xmem_requeue_plan plan;
    char why[256];
    /* A rerun reports it too: its job_end replaces the first run's in the ledger. */
    bool earlier = xmem_requeue_mark_parse(info->admin_comment, &plan) == 0 &&
                   strcmp(plan.reason, XMEM_REQUEUE_OOM) == 0;

    f.on_share = xmem__on_share(sp);
    if (xmem__settings.oom_requeue.mode == XMEM_REQUEUE_OFF || !cuda_oom || !f.on_share)
        return earlier;
    facts_from(info, &f);
    if (!xmem_requeue_decide(&xmem__settings.oom_requeue, &f, &plan, why, sizeof(why))) {
        if (why[0] != '\0')
            slurm_info("xmem: job %" PRIu32 " ran out of GPU memory, not requeued: %s", job_id,
                       why);
        return earlier;
    }
    return requeue(job_id, info, &plan) == 0 || earlier;
}

int xmem__requeue_whole(uint32_t job_id, const struct xmem_job_info *info, const char *why)
{
    struct xmem_requeue_facts f = {0};
    struct xmem_requeue_plan plan;
    char refused[256];

    facts_from(info, &f);
    if (!xmem_requeue_decide(NULL, &f, &plan, refused, sizeof(refused))) {
        slurm_info("xmem: job %" PRIu32 " not requeued (%s): %s", job_id, why, refused);
        return -1;
    }
    snprintf(plan.reason, sizeof(plan.reason), "%.*s", (int)strcspn(why, ";="), why);
    return requeue(job_id, info, &plan);
}

/* The one line the job's output gets. */
static void tell_output(const struct xmem_requeue_plan *plan)
{
    char what[160];

    if (strcmp(plan->reason, XMEM_REQUEUE_OOM) == 0)
        snprintf(what, sizeof(what), "ran out of GPU memory");
    else
        snprintf(what, sizeof(what), "was stopped (%s)", plan->reason);
    if (plan->whole)
        fprintf(stderr,
                "xmem: the first run on gres:%s:%u (limit %llu MiB) %s; xmem requeued the job "
                "once with a whole GPU (gres:%s:%u: all of one GPU, no memory limit)\n",
                plan->from.kind, plan->from.count, plan->from_limit_mb, what, plan->to.kind,
                plan->to.count);
    else
        fprintf(stderr,
                "xmem: the first run on gres:%s:%u (limit %llu MiB) %s; xmem requeued the job "
                "once on gres:%s:%u (limit %llu MiB)\n",
                plan->from.kind, plan->from.count, plan->from_limit_mb, what, plan->to.kind,
                plan->to.count, plan->to_limit_mb);
    fflush(stderr);
}

/* The plan of this run when xmem requeued it: a restart (slurmctld's count, or
 * SLURM_RESTART_COUNT) and the mark in its AdminComment (a mark forged in the Comment, then
 * `scontrol requeue` by the user, is not one). */
bool xmem__requeue_task_init(spank_t sp, const struct xmem_job_record *rec)
{
    const char *admin_comment = rec->admin_comment;
    struct xmem_requeue_plan plan;
    char visible[256] = "", limit[512];
    uint32_t stepid = 0;

    if (!xmem__rerun(sp, rec) || xmem_requeue_mark_parse(admin_comment, &plan) < 0)
        return false;
    if (plan.whole) {
        spank_unsetenv(sp, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT");
    } else {
        spank_getenv(sp, "CUDA_VISIBLE_DEVICES", visible, sizeof(visible));
        xmem__limit_string(visible, plan.to_limit_mb, limit, sizeof(limit));
        spank_setenv(sp, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", limit, 1);
    }
    if (spank_get_item(sp, S_JOB_STEPID, &stepid) == ESPANK_SUCCESS && stepid == SLURM_BATCH_SCRIPT)
        tell_output(&plan);
    return true;
}
