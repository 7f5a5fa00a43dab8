/*
 * xmem_client.h — the small C library that the SPANK plugin and the `xmem` CLI share to talk
 * to xmemd over its unix socket (protocol: docs/protocol.md).
 *
 * Every call takes a deadline in milliseconds and never blocks past it. Calls return 0 on
 * success or one of the negative XMEM_CLIENT_E* codes, with a one-line, user-facing message
 * in err (e.g. "xmem: cannot reach xmemd at /run/xmem/xmemd.sock: No such file or directory
 * (is xmemd running?)"). Nothing here allocates memory the caller must free, except where a
 * function says so.
 */
#ifndef XMEM_CLIENT_H
#define XMEM_CLIENT_H

#include "contract/defaults.h" /* XMEM_DEFAULT_SOCKET */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum xmem_client_error {
    XMEM_CLIENT_OK = 0,
    XMEM_CLIENT_EUNREACH = -1,  /* cannot connect: no daemon, wrong path, permissions */
    XMEM_CLIENT_ETIMEDOUT = -2, /* deadline passed before a full reply arrived */
    XMEM_CLIENT_EBUSY = -3,     /* daemon answered "busy": queue full */
    XMEM_CLIENT_EPROTO = -4,    /* reply malformed, wrong magic/version, oversized */
    XMEM_CLIENT_EREFUSED = -5,  /* daemon answered with an error outcome (see result) */
    XMEM_CLIENT_EINVAL = -6,    /* bad arguments from the caller */
};

/* One line of a batch script: its 1-based number and its text (continuations joined). */
struct xmem_script_line {
    int line;
    const char *text;
};

struct xmem_estimate_request {
    const char *const
        *argv;          /* entrypoint command, NULL-terminated, e.g. {"python3","train.py",NULL} */
    const char *script; /* batch script the entrypoint came from, or NULL: the decision is
                           bound to its SHA-256, and xmemd checks argv and preamble against it */
    const char *wrap;   /* sbatch --wrap's command, or NULL: bound like the script sbatch
                           builds from it (xmem_wrap_script); never with script */
    const char *cwd;    /* working directory of the job */
    const char *const *env; /* "KEY=VALUE" strings, NULL-terminated; only the ones that matter
                               are sent (contract/request_env.h) */
    const char *gpu;        /* GPU catalog name, or NULL for the partition's / site default */
    const char *partition;  /* Slurm partition, or NULL */
    const char *gres;       /* the GPU request, "gpu:1" or "gpu:TYPE:1", or NULL: signed */
    const char *torch;      /* target PyTorch version, or NULL for the site default */
    int steps;              /* optimizer steps to profile; 0 = default */
    int check_only;         /* 1: --xmem=check, report only */
    int async_ok; /* 1: the caller (sbatch) can take outcome pending, then the job is held */
    /* The batch script's preamble (docs/protocol.md): lines that set the environment, run
     * by xmemd as the user before the profile, and the lines before the entrypoint it does
     * not run (they do work). NULL/0 when there is none. */
    const struct xmem_script_line *preamble;
    int preamble_count;
    const struct xmem_script_line *skipped;
    int skipped_count;
};

struct xmem_estimate_result {
    int outcome;               /* numbered outcome code (docs/outcomes.md); 0 = estimated */
    char outcome_name[64];     /* e.g. "estimated", "profile_timeout" */
    uint64_t peak_bytes;       /* what nvidia-smi would show for the process */
    uint64_t limit_bytes;      /* recommended hard limit */
    uint64_t gpu_memory_bytes; /* capacity of the GPU estimated for */
    int fits;                  /* 1 if limit_bytes fits the GPU */
    int cached;                /* 1 if answered from the cache */
    uint64_t request_id;       /* ledger row id */
    char gpu[64];
    char entrypoint[512];
    char decision[2048]; /* MUNGE credential signing the decision; "" when none */
    char message[512];   /* one line for the user */
    char skipped[512];   /* preamble lines not run: "line 5 'srun hostname', ..."; "" if none */
};

/* Ask for an estimate. On XMEM_CLIENT_EREFUSED the result carries the outcome and message. */
int xmem_client_estimate(const char *socket_path, int deadline_ms,
                         const struct xmem_estimate_request *req, struct xmem_estimate_result *res,
                         char *err, size_t errlen);

/* A finished job, as slurmstepd saw it (docs/protocol.md, job_end). Zero-initialise it and
 * fill what is known: NULL strings and has_measured_peak = 0 are sent as absent (NULL in the
 * ledger), so a field added later never needs a caller to change. */
struct xmem_job_end {
    uint64_t request_id; /* the estimate the job ran under */
    uint32_t job_id;
    int exit_status; /* largest task exit code; 128+signal for a killed task */
    uint64_t elapsed_seconds;
    int cuda_oom;                 /* 1: the job's output shows a CUDA out-of-memory error */
    const char *account;          /* Slurm account, or NULL */
    const char *partition;        /* Slurm partition, or NULL */
    int has_measured_peak;        /* 1: measured_peak_bytes holds an NVML measurement */
    uint64_t measured_peak_bytes; /* largest sum of the job's GPU memory seen by NVML */
    int has_job_uid;              /* 1: job_uid holds the uid the job ran as */
    uint32_t job_uid;             /* required when root reports: the request must be this uid's */
    const char *enforcement;      /* level applied to the job (enforcement.h name), NULL: unknown */
    int oom_requeued;             /* 1: xmem requeued this job after a CUDA OOM on its share */
    const char *share;            /* "shard:3" when xmem packed the job, else NULL */
    double gpu_fraction;          /* with share: the part of one GPU it is (0 < f <= 1) */
    /* With share, from root's packing record: the limit and the estimate (0: absent), which
     * let an xmemd that does not hold the request write the job's record (docs/slurm.md). */
    uint64_t packed_limit_bytes, packed_estimate_bytes;
    char *record;      /* out, may be NULL: the job's accounting record (JSON) */
    size_t record_len; /* its size; "" when xmemd sent none or it did not fit */
};

/* Report a finished job for accounting (best effort; callers ignore failures). */
int xmem_client_job_end(const char *socket_path, int deadline_ms, const struct xmem_job_end *job,
                        char *err, size_t errlen);

/* status / stats: *json_out is malloc'd, caller frees. type is "status" or "stats". */
int xmem_client_query(const char *socket_path, int deadline_ms, const char *type, char **json_out,
                      char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
