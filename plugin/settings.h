/*
 * settings.h — plugstack.conf arguments (settings.c).
 *
 * Contract: xmem_settings_parse returns 0 or -1 and, on -1, leaves a one-line message
 * starting with "xmem: " in err.
 */
#ifndef XMEM_SETTINGS_H
#define XMEM_SETTINGS_H

#include <stddef.h>

/* oom_requeue= (parsed by requeue.c: xmem_requeue_option_parse) */
enum xmem_requeue_mode {
    XMEM_REQUEUE_WHOLE = 0,  /* rerun on every share of one GPU (default) */
    XMEM_REQUEUE_FACTOR = 1, /* rerun on the share times factor (whole past the GPU) */
    XMEM_REQUEUE_OFF = 2,
};
struct xmem_requeue_option {
    int mode;      /* enum xmem_requeue_mode */
    double factor; /* XMEM_REQUEUE_FACTOR: in (1, XMEM_REQUEUE_MAX_FACTOR] */
};

enum xmem_on_failure {
    XMEM_ON_FAILURE_KEEP = 0,   /* submit with the original request and warn (default) */
    XMEM_ON_FAILURE_REJECT = 1, /* refuse the submission */
};

struct xmem_settings {
    char socket[108];      /* socket=PATH */
    int timeout_s;         /* timeout=SECONDS: deadline of an estimate */
    int on_failure;        /* on_failure=keep|reject */
    int steps;             /* steps=N: optimizer steps to profile, 0 = daemon default */
    int verbose;           /* verbose=0|1: say more in sbatch */
    char nvml[256];        /* nvml=PATH|off: the NVML library slurmstepd samples */
    int nvml_interval_ms;  /* nvml_interval_ms=N: time between two samples */
    char scontrol[256];    /* scontrol=PATH: finds the job's output files at its end */
    char squeue[256];      /* squeue=PATH: reads root's record of a job at its start */
    int enforce;           /* enforce=auto|LEVEL: the best level to try (auto = dmem) */
    char cgroup_root[256]; /* cgroup_root=PATH: where cgroup v2 is mounted */
    char job_cgroup[256];  /* job_cgroup=PATTERN: the job's cgroup dir, %j = job id; "" = /proc */
    char mps_control[256]; /* mps_control=PROGRAM: nvidia-cuda-mps-control, on PATH or absolute */
    struct xmem_requeue_option oom_requeue; /* oom_requeue=whole|factor:F|off */
};

void xmem_settings_init(struct xmem_settings *s);
/* Parses plugstack.conf arguments strictly: an unknown key or bad value fails. */
int xmem_settings_parse(struct xmem_settings *s, int ac, char **av, char *err, size_t errlen);

#endif
