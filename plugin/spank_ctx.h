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

/* remote_enforce.c: holds the job step's packed job (limit mb MiB; 0: not packed) to its
 * limit with the best level the node offers; -1 (and the line in the job's stderr and
 * slurmd's log) when that is below the required level. */
int xmem__enforce_job(spank_t sp, uint64_t mb);
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
