/*
 * remote_enforce.h — in the step that may stand for the job (the batch step, step 0), hold
 * a job xmem packed to the limit in root's record with the best level the node offers
 * (remote_enforce.c; enforce.c holds the pure parts). remote.c calls it; it uses
 * stepd_job.h.
 *
 * Contract: xmem__enforce_job and xmem__enforce_stop_task return 0 or -1;
 * xmem__enforce_refused is a bool predicate.
 */
#ifndef XMEM_REMOTE_ENFORCE_H
#define XMEM_REMOTE_ENFORCE_H

#include <stdbool.h>

#include <slurm/spank.h>

/* -1 (and the line in the job's stderr and slurmd's log) when the level the node offers is
 * below the required level, or the record cannot be read where a level is required. */
int xmem__enforce_job(spank_t sp);
/* True when this node refused the packed job for want of the required level: the job can be
 * requeued whole. */
bool xmem__enforce_refused(void);
/* Kills the just-forked task of a refused job before it execs, so the job ends FAILED (a
 * task killed by SIGKILL) rather than COMPLETED: Slurm 22.05 reports a batch job whose
 * task_post_fork failed as completed with exit status 0. -1 when it cannot. */
int xmem__enforce_stop_task(spank_t sp);
/* The level applied to the job (an enforcement.h name), NULL when not decided here. */
const char *xmem__enforce_applied(void);

#endif
