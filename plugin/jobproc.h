/*
 * jobproc.h — whether a process belongs to a job, from /proc (jobproc.c).
 *
 * Contract: xmem_cgroup_has_job and xmem_pid_in_job are bool predicates; xmem_stat_ppid
 * returns 0 or -1.
 */
#ifndef XMEM_JOBPROC_H
#define XMEM_JOBPROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* True when a /proc/PID/cgroup text places the process in job job_id ("/job_<id>/"). */
bool xmem_cgroup_has_job(const char *text, uint32_t job_id);
/* The parent pid from a /proc/PID/stat text. */
int xmem_stat_ppid(const char *text, pid_t *ppid);
/* True when pid is in the job's cgroup or descends from ancestor (0: no ancestor test). */
bool xmem_pid_in_job(pid_t pid, uint32_t job_id, pid_t ancestor);

#endif
