/*
 * spank_ctx.h — what the dispatch file (xmem.c) shares with the context files
 * (allocator.c: sbatch, salloc, srun outside a job; remote.c: slurmstepd), and the settings
 * every SPANK-side file reads. remote.c's helpers have headers of their own: stepd_job.h,
 * remote_enforce.h, requeue_step.h.
 *
 * Contract: every hook returns 0 or -1, as SPANK wants.
 */
#ifndef XMEM_SPANK_CTX_H
#define XMEM_SPANK_CTX_H

#include <slurm/spank.h>

#include "settings.h"
#include "value.h"

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

#endif
