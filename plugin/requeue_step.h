/*
 * requeue_step.h — slurmstepd's side of the requeue after a CUDA OOM on a share
 * (requeue_step.c; requeue.c decides). remote.c calls it; it uses stepd_job.h.
 *
 * Contract: xmem__requeue_whole returns 0 or -1; xmem__requeue_after_oom and
 * xmem__requeue_task_init are bool, true when the thing they name happened.
 */
#ifndef XMEM_REQUEUE_STEP_H
#define XMEM_REQUEUE_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include <slurm/spank.h>

#include "jobinfo.h"

/* At job end: requeue a batch job that ran out of GPU memory on its share, once (the
 * oom_requeue= option). True when xmem requeued the job after a CUDA OOM, now or before this
 * run (the rerun's job_end replaces the first run's row in the ledger). */
bool xmem__requeue_after_oom(spank_t sp, uint32_t job_id, const struct xmem_job_info *info,
                             bool cuda_oom);
/* Requeues a packed batch job once on a whole GPU for another reason (why: a few words, e.g.
 * "node cannot enforce mps-server"), from the job's info as slurmctld gave it at job end;
 * 0 or -1, logged. */
int xmem__requeue_whole(uint32_t job_id, const struct xmem_job_info *info, const char *why);
/* task_init of a rerun (a restart and the mark in rec's AdminComment): its limit and the
 * line in its output; true when this run was one. */
bool xmem__requeue_task_init(spank_t sp, const struct xmem_job_record *rec);
/* The shares of kind per GPU of the job's nodes (a name or a hostlist), from `scontrol show
 * node NODES`: 0 when unknown or when two nodes differ (xmem_nodes_share_per_gpu). */
unsigned xmem__share_per_gpu(const char *nodes, const char *kind);

#endif
