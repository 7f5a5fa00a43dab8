/*
 * stepd_job.h — what slurmstepd reads of the job it runs, shared by remote.c,
 * remote_enforce.c and requeue_step.c (stepd_job.c): the step's environment, root's record
 * of the job, whether this run is a rerun, and the limit variable's value. It calls none of
 * them, so they depend on it and not on each other in a circle.
 *
 * Contract: xmem__job_record returns 0 or -1 (why in err); the others named as questions are
 * bool predicates, true when the thing holds.
 */
#ifndef XMEM_STEPD_JOB_H
#define XMEM_STEPD_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include <slurm/spank.h>

#include "jobinfo.h"

/* True when the step's environment has `name`, non-empty, copied into buf. */
bool xmem__getenv(spank_t sp, const char *name, char *buf, int len);
/* True when the job runs on a GPU share (shard or mps) as slurmstepd set it up. */
bool xmem__on_share(spank_t sp);
/* "0=12288M" or "0=12288M,1=12288M" (one entry per device in visible) into out. */
void xmem__limit_string(const char *visible, unsigned long long mb, char *out, size_t len);
/* Root's record of this job as slurmctld gives it (squeue: BatchFlag, AdminComment), read
 * once per process; 0 and *r, or -1 and why in err. */
int xmem__job_record(spank_t sp, const struct xmem_job_record **r, char *err, size_t errlen);
/* True when SLURM_RESTART_COUNT says this run is a requeued one. */
bool xmem__restarted(spank_t sp);
/* Whether this run is a rerun: slurmctld's restart count in REC, or SLURM_RESTART_COUNT
 * where the step's environment has it (not yet in task_post_fork: issue 26, M8). */
bool xmem__rerun(spank_t sp, const struct xmem_job_record *rec);

#endif
