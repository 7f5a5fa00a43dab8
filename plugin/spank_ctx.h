/*
 * spank_ctx.h — what the dispatch file (xmem.c) shares with the context files
 * (allocator.c: sbatch, salloc, srun outside a job; remote.c: slurmstepd).
 */
#ifndef XMEM_SPANK_CTX_H
#define XMEM_SPANK_CTX_H

#include <slurm/spank.h>

#include "xmem_plugin.h"

/* Set once in slurm_spank_init from plugstack.conf; read-only afterwards. */
extern struct xmem_settings xmem__settings;

/* slurm_spank_init, allocator/local side: forget XMEM_* the caller's environment had. */
int xmem__allocator_init(void);
/* Option callback, allocator/local side: estimate (at most once) and remember. */
int xmem__allocator_option(const struct xmem_value *v, const char *optarg);
/* slurm_spank_init_post_opt, allocator/local side: hand the decision on. */
int xmem__allocator_post_opt(spank_t sp);

int xmem__remote_init(spank_t sp);
int xmem__remote_task_init(spank_t sp);
int xmem__remote_task_post_fork(spank_t sp);
int xmem__remote_task_exit(spank_t sp);
int xmem__remote_exit(spank_t sp);
/* 1 when the step's environment has `name`, non-empty, copied into buf. */
int xmem__getenv(spank_t sp, const char *name, char *buf, int len);
/* 1 when the job runs on a GPU share (shard or mps) as slurmstepd set it up. */
int xmem__on_share(spank_t sp);
/* "0=12288M" or "0=12288M,1=12288M" (one entry per device in visible) into out. */
void xmem__limit_string(const char *visible, unsigned long long mb, char *out, size_t len);

/* requeue_step.c. At job end: requeue a batch job that ran out of GPU memory on its share,
 * once (the oom_requeue= option). 1 when xmem requeued the job after a CUDA OOM, now or
 * before this run (the rerun's job_end replaces the first run's row in the ledger). */
int xmem__requeue_after_oom(spank_t sp, uint32_t job_id, const struct xmem_job_info *info,
                            int cuda_oom);
/* Requeues a packed batch job once on a whole GPU for another reason (why: a few words, e.g.
 * "node cannot enforce mps-server"), from the job's info as slurmctld gave it at job end;
 * 0 or -1, logged. */
int xmem__requeue_whole(uint32_t job_id, const struct xmem_job_info *info, const char *why);
/* task_init of a rerun (SLURM_RESTART_COUNT and the mark in info's AdminComment): its limit
 * and the line in its output; 1 when it was one. */
int xmem__requeue_task_init(spank_t sp, const struct xmem_job_record *rec);
/* Whether this run is a rerun: slurmctld's restart count in REC, or SLURM_RESTART_COUNT
 * where the step's environment has it (not yet in task_post_fork: issue 26, M8). */
int xmem__rerun(spank_t sp, const struct xmem_job_record *rec);
/* 1 when SLURM_RESTART_COUNT says this run is a requeued one. */
int xmem__restarted(spank_t sp);
/* Root's record of this job as slurmctld gives it (squeue: BatchFlag, AdminComment), read
 * once per process; 0 and *r, or -1 and why in err. */
int xmem__job_record(spank_t sp, const struct xmem_job_record **r, char *err, size_t errlen);

/* remote_enforce.c, in the step that may stand for the job (the batch step, step 0): holds
 * a job xmem packed to the limit in root's record with the best level the node offers; -1
 * (and the line in the job's stderr and slurmd's log) when that is below the required level
 * or the record cannot be read where a level is required. */
int xmem__enforce_job(spank_t sp);
/* 1 when this node refused the packed job for want of the required level: the job can be
 * requeued whole. */
int xmem__enforce_refused(void);
/* Kills the just-forked task of a refused job before it execs, so the job ends FAILED (a
 * task killed by SIGKILL) rather than COMPLETED: Slurm 22.05 reports a batch job whose
 * task_post_fork failed as completed with exit status 0. -1 when it cannot. */
int xmem__enforce_stop_task(spank_t sp);
/* The level applied to the job (an enforcement.h name), NULL when not decided here. */
const char *xmem__enforce_applied(void);

#endif
