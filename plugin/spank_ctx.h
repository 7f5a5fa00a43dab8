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
/* "0=12288M" or "0=12288M,1=12288M" (one entry per device in visible) into out. */
void xmem__limit_string(const char *visible, unsigned long long mb, char *out, size_t len);

/* requeue_step.c. At job end: requeue a batch job that ran out of GPU memory on its share,
 * once (the oom_requeue= option). 1 when xmem requeued the job after a CUDA OOM, now or
 * before this run (the rerun's job_end replaces the first run's row in the ledger). */
int xmem__requeue_after_oom(spank_t sp, uint32_t job_id, const struct xmem_job_info *info,
                            int cuda_oom);
/* Requeues a packed batch job once on a whole GPU for another reason (why: a few words, e.g.
 * "node cannot enforce mps-server"); 0 or -1, logged. */
int xmem__requeue_whole(spank_t sp, uint32_t job_id, const char *why);
/* task_init of a rerun: its limit and the line in its output; 1 when it was one. */
int xmem__requeue_task_init(spank_t sp);

#endif
