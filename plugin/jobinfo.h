/*
 * jobinfo.h — what slurmctld says of a job: `scontrol show job` at its end, root's record
 * (squeue) at its start (jobinfo.c).
 *
 * Contract: the queries and xmem_job_record_parse return 0 or -1 (the queries with a
 * one-line message starting with "xmem: " in err). No predicates here.
 */
#ifndef XMEM_JOBINFO_H
#define XMEM_JOBINFO_H

#include <stddef.h>
#include <stdint.h>

/* What `scontrol show job` says of a finished job; "" (or 0) for what it did not say
 * clearly. */
struct xmem_job_info {
    char std_out[4096];
    char std_err[4096];
    char account[65];
    char partition[65];
    char admin_comment[2048]; /* root's: job_submit.lua's "xmem: ...", then the requeue mark */
    char tres_per_node[128];  /* "gres:shard:3": what the job is allocated per node */
    char node_list[256];
    uint32_t priority;
    int batch; /* 1: a batch job (BatchFlag=1), which Slurm can requeue */
};

/* Parses `scontrol show job ID` output (a key printed twice is ignored as ambiguous). */
void xmem_job_info_parse(const char *text, struct xmem_job_info *info);
/* Runs `scontrol show job ID` within deadline_ms and parses it. */
int xmem_job_info_query(const char *scontrol, uint32_t job_id, int deadline_ms,
                        struct xmem_job_info *info, char *err, size_t errlen);
/* Root's record of a job: BatchFlag, RestartCnt and AdminComment as
 * `squeue -O batchflag:0,restartcnt:0/,admin_comment:0` prints them, "12/xmem: estimate=..."
 * on one line. Read this way, not from `scontrol show job`,
 * where a job name, comment or path holding "AdminComment=" makes the record ambiguous: a
 * user could then have their job's record read as none. */
struct xmem_job_record {
    int batch;
    uint32_t restarts; /* RestartCnt: slurmctld's, known where SLURM_RESTART_COUNT is not */
    char admin_comment[2048];
};
/* 0, or -1 when out is not one such line (no job, several lines, no flag). */
int xmem_job_record_parse(const char *out, struct xmem_job_record *r);
/* Runs squeue for the job within deadline_ms and parses its answer; -1 and why in err. */
int xmem_job_record_query(const char *squeue, uint32_t job_id, int deadline_ms,
                          struct xmem_job_record *r, char *err, size_t errlen);

#endif
