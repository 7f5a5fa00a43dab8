/*
 * xmem_plugin.h — internal interface between the parts of the xmem SPANK plugin.
 *
 * The pure parts (settings, option values, sizes, command lines, entrypoints, request
 * classification) know nothing of SPANK, so the unit tests link them directly; the
 * context files (allocator.c, remote.c) and the dispatch file (xmem.c) use SPANK.
 * Every function returns 0 or -1 and, on -1, leaves a one-line message starting with
 * "xmem: " in err.
 */
#ifndef XMEM_PLUGIN_H
#define XMEM_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The batch-script and command-line parsing the plugin shares with xmemd. */
#include "xmem_script.h"

/* ---- plugstack.conf arguments (settings.c) ---------------------------------------------- */

/* oom_requeue= (requeue.c) */
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

/* ---- the --xmem option value (value.c) -------------------------------------------------- */

enum xmem_mode {
    XMEM_MODE_UNSET = -1, /* no --xmem given */
    XMEM_MODE_OFF = 0,
    XMEM_MODE_AUTO = 1,   /* profile the entrypoint, rewrite the request */
    XMEM_MODE_CHECK = 2,  /* profile and report, change nothing */
    XMEM_MODE_BUDGET = 3, /* a declared size, no profile */
};

struct xmem_value {
    int mode;              /* enum xmem_mode */
    uint64_t budget_bytes; /* XMEM_MODE_BUDGET only */
};

/* Parses an --xmem argument; NULL (bare --xmem) means auto. */
int xmem_value_parse(const char *arg, struct xmem_value *v, char *err, size_t errlen);
const char *xmem_mode_name(int mode);

/* Parses "12G", "12288M", "512MiB", "1.5G", "40960" (MiB when no unit) into bytes. */
int xmem_size_parse(const char *s, uint64_t *bytes);
/* The one way xmem reads a number from a record or the job's environment (docs/enforcement.md
 * "Numbers"): 1 to XMEM_DECIMAL_MAX_DIGITS plain decimal digits, nothing else (no sign,
 * blank, exponent, hex, fraction, unit), and at most max. 0 and the value, else -1.
 * etc/xmem_lib.lua's decimal() is the same rule. */
#define XMEM_DECIMAL_MAX_DIGITS 15
int xmem_decimal_parse(const char *s, uint64_t max, uint64_t *out);
/* Formats bytes as "12.0 GiB" / "512 MiB". */
void xmem_size_format(uint64_t bytes, char *buf, size_t len);

/* ---- the job's environment (export.c) ------------------------------------------------------ */

/* The --export value in force: the command line's, else SBATCH_EXPORT, else the script's,
 * else "ALL" (sbatch's order). */
const char *xmem_export_spec(const struct xmem_cmdline *c, const char *sbatch_export);
/* The environment sbatch exports to the job for that value, from the submission's
 * environment: a malloc'd NULL-terminated "NAME=value" list (free with xmem_argv_free), or
 * NULL when out of memory. */
char **xmem_export_env(const char *spec, char *const *environ_);

/* ---- GPU request classification (classify.c) ---------------------------------------------- */

enum xmem_request_kind {
    XMEM_REQ_NONE = 0,   /* no GPU asked for */
    XMEM_REQ_SINGLE = 1, /* exactly one GPU on one node: version 1 rewrites these */
    XMEM_REQ_MULTI = 2,  /* several GPUs, tasks or nodes: left unchanged */
    XMEM_REQ_SHARED = 3, /* already a shard/mps request: left unchanged */
};
int xmem_request_classify(const struct xmem_cmdline *c, char *why, size_t whylen);
/* The GPU request in the canonical form a decision is bound to, "gpu:1" or "gpu:TYPE:1"
 * (job_submit.lua derives the same from the job: xmem_lib.lua gpu_request). Call it for a
 * single-GPU request; returns 0, or -1 when buf is too small. */
int xmem_request_gpu(const struct xmem_cmdline *c, char *buf, size_t len);

/* ---- job end: output files, CUDA OOM, GPU memory (jobinfo.c, run.c, oom.c, jobproc.c,
 *      nvml.c) ------------------------------------------------------------------------------ */

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
/* Runs argv (PATH search) with stdin and stderr on /dev/null; out gets the head of its
 * stdout. Past deadline_ms the child is killed. 0 only when it exited with status 0. */
int xmem_run_capture(char *const argv[], int deadline_ms, char *out, size_t outlen, char *err,
                     size_t errlen);
/* The same, with `input` (NULL: /dev/null; at most a pipe buffer) on its stdin and envp (NULL:
 * this process's) as its environment. */
int xmem_run_feed(char *const argv[], char *const envp[], const char *input, int deadline_ms,
                  char *out, size_t outlen, char *err, size_t errlen);

/* 1 when buf holds one of PyTorch's CUDA out-of-memory messages. */
int xmem_oom_text(const char *buf, size_t len);
/* Scans the last XMEM_PLUGIN_OOM_SCAN_BYTES of path, only if it is a regular file owned by
 * owner (never following a final symlink); /dev/null is 0 with *found = 0. */
int xmem_oom_scan_file(const char *path, uid_t owner, int *found, char *err, size_t errlen);

/* 1 when a /proc/PID/cgroup text places the process in job job_id ("/job_<id>/"). */
int xmem_cgroup_has_job(const char *text, uint32_t job_id);
/* The parent pid from a /proc/PID/stat text. */
int xmem_stat_ppid(const char *text, pid_t *ppid);
/* 1 when pid is in the job's cgroup or descends from ancestor (0: no ancestor test). */
int xmem_pid_in_job(pid_t pid, uint32_t job_id, pid_t ancestor);

struct xmem_sampler_config {
    char library[256]; /* dlopen name or path of libnvidia-ml */
    int interval_ms;
    uint32_t job_id;
    pid_t ancestor; /* this slurmstepd */
};
struct xmem_sampler;
/* Starts the sampler thread; it opens NVML itself, so a slow nvmlInit delays no task. */
int xmem_sampler_start(const struct xmem_sampler_config *cfg, struct xmem_sampler **s, char *err,
                       size_t errlen);
/* Stops and joins it (at most timeout_ms) and frees it. Returns 1 and the peak in bytes
 * when something was measured, else 0 with the reason in why. */
int xmem_sampler_stop(struct xmem_sampler *s, int timeout_ms, uint64_t *peak, char *why,
                      size_t whylen);

/* ---- holding a packed job to its limit on its node (enforce.c, docs/enforcement.md) ----- */

/* The levels are daemon/contract/enforcement.h's, the one definition. */
#include "../daemon/contract/enforcement.h"

/* The job's cgroup v2 directory: root followed by the "0::" path of a /proc/PID/cgroup text,
 * cut after its job_<job_id> component. -1 when the task is in no such cgroup. */
int xmem_cgroup_job_dir(const char *proc_cgroup, uint32_t job_id, const char *root, char *dir,
                        size_t len);
/* plugstack job_cgroup=PATTERN with every %j replaced by the job id. */
int xmem_cgroup_pattern_dir(const char *pattern, uint32_t job_id, char *dir, size_t len);

#define XMEM_DMEM_MAX_REGIONS 16
#define XMEM_DMEM_REGION_LEN 128
/* The device memory regions of cgroup v2's dmem controller ("drm/0000:03:00.0/vram0"). */
struct xmem_dmem_regions {
    int n;
    char name[XMEM_DMEM_MAX_REGIONS][XMEM_DMEM_REGION_LEN];
};
/* Reads a dmem.capacity text ("REGION BYTES" lines); -1 when malformed or empty. */
int xmem_dmem_capacity_parse(const char *text, struct xmem_dmem_regions *r);
/* "REGION BYTES\n" for every region: what one write() to dmem.max carries. */
int xmem_dmem_max_text(const struct xmem_dmem_regions *r, uint64_t bytes, char *buf, size_t len);
/* 1 when a dmem.max text shows `bytes` for every region. */
int xmem_dmem_max_shows(const char *text, const struct xmem_dmem_regions *r, uint64_t bytes);
/* 1 when root's dmem.capacity lists a region (into r) and job_dir has a dmem.max. */
int xmem_dmem_available(const char *root, const char *job_dir, struct xmem_dmem_regions *r);
/* Writes the limit for every region to job_dir/dmem.max and checks that it reads back. */
int xmem_dmem_apply(const char *job_dir, const struct xmem_dmem_regions *r, uint64_t bytes,
                    char *err, size_t errlen);

/* 1 when program is an executable absolute path or found on PATH. */
int xmem_program_found(const char *program);
/* 1 when pipe_dir/control is a socket or FIFO owned by root (the MPS control daemon's). */
int xmem_mps_pipe_ok(const char *pipe_dir);
/* 1 when gpus is a list of GPU indices, "0" or "0,2". */
int xmem_gpu_list_ok(const char *gpus);
/* The pids of a get_server_list answer (one a line); returns how many, at most max. */
int xmem_mps_server_pids(const char *text, pid_t *pids, int max);
/* The real uid of a /proc/PID/status text. */
int xmem_status_uid(const char *status, uid_t *uid);
/* The nvidia-cuda-mps-control commands that pin mb MiB on each GPU of gpus, for new servers
 * (set_default_device_pinned_mem_limit) and for each running server of the job's user. */
int xmem_mps_commands(const char *gpus, uint64_t mb, const pid_t *servers, int nservers, char *out,
                      size_t len);
/* Runs control (as the caller, root) against pipe_dir: get_server_list, then the commands
 * for the servers of uid. 0 only when both exit with status 0. */
int xmem_mps_apply(const char *control, const char *pipe_dir, const char *gpus, uint64_t mb,
                   uid_t uid, char *err, size_t errlen);

/* The first device's limit in MiB of a CUDA_MPS_PINNED_DEVICE_MEM_LIMIT value ("0=4096M",
 * "0=4G,1=4G"). */
int xmem_pinned_limit_mb(const char *text, uint64_t *mb);

/* The best level at most cap among the available ones (bit 1 << level); none at worst. */
int xmem_enforce_best(int cap, unsigned available);
/* 1 when the applied level meets the required one (a name; NULL or "": none required). An
 * unknown name is met by no level: the node refuses rather than guess. */
int xmem_enforce_meets(int applied, const char *required);

/* ---- after a CUDA OOM on a share (requeue.c; requeue_step.c runs it) ------------------ */

/* Parses oom_requeue=whole|factor:F|off. */
int xmem_requeue_option_parse(const char *v, struct xmem_requeue_option *o, char *err,
                              size_t errlen);

/* The mark xmem appends to a requeued job's AdminComment, "xmem: requeued after <reason> ...":
 * once there, the job is never requeued again, for any reason. */
#define XMEM_REQUEUE_MARK "xmem: requeued after "
#define XMEM_REQUEUE_OOM "CUDA OOM"

struct xmem_share {
    char kind[8]; /* "shard" or "mps" */
    unsigned count;
};
/* What job_submit.lua wrote: "xmem: estimate=.. limit=3000M .. request=gres:gpu:1->shard:3". */
struct xmem_packed {
    char original[32]; /* "gres:gpu:1" */
    struct xmem_share share;
    unsigned long long limit_mb; /* the limit the job was held to */
    char required[16];           /* required=LEVEL: the site's required level; "" none */
};
/* 0 when the comment's last xmem part says the job was packed, in a form xmem writes. */
int xmem_comment_packed(const char *comment, struct xmem_packed *p);
/* What a packed job is held to on its node, from root's AdminComment only (never the
 * client's SPANK environment): the packing record's limit and required level, or after a
 * requeue (restarted: SLURM_RESTART_COUNT > 0) the mark's limit, 0 for a whole rerun. */
struct xmem_record_limit {
    unsigned long long limit_mb;
    int rerun;         /* 1: the limit is the requeue mark's */
    char required[16]; /* "" when the site required no level */
};
/* 1 when xmem packed the job (r filled), 0 when the comment says it did not. */
int xmem_record_limit(const char *comment, int restarted, struct xmem_record_limit *r);
/* 1 when the comment carries XMEM_REQUEUE_MARK. */
int xmem_comment_marked(const char *comment);
/* A node's shares of kind per GPU from its Gres= ("gpu:2,shard:20" -> 10); 0 or -1. */
int xmem_node_share_per_gpu(const char *gres, const char *kind, unsigned *per_gpu);

struct xmem_requeue_plan {
    char reason[96]; /* XMEM_REQUEUE_OOM or the caller's; no ';' nor '=' */
    struct xmem_share from, to;
    unsigned long long from_limit_mb;
    unsigned long long to_limit_mb; /* 0 when whole: the rerun has no limit */
    int whole;                      /* to is every share of one GPU */
};
/* The mark with the plan: "xmem: requeued after CUDA OOM from=shard:3 limit=3000M
 * to=shard:10 whole" or
 * "... to=shard:6 limit=6000M". The rerun reads it back (task_init). */
int xmem_requeue_mark_format(const struct xmem_requeue_plan *plan, char *buf, size_t len);
int xmem_requeue_mark_parse(const char *comment, struct xmem_requeue_plan *plan);

/* What slurmstepd knows at the end of the job. */
struct xmem_requeue_facts {
    int cuda_oom;              /* the job's output shows a CUDA OOM */
    int on_share;              /* its environment says it ran on a shard or mps share */
    int batch;                 /* a batch job */
    const char *admin_comment; /* from slurmctld: only root writes it */
    const char *tres_per_node; /* from slurmctld: "gres:shard:3" */
    unsigned per_gpu;          /* the node's shares of that kind per GPU; 0 unknown */
};
/* 1: requeue with plan (reason XMEM_REQUEUE_OOM). 0: not; why says why when it is worth a
 * log line ("" otherwise). With o NULL: requeue whole for another reason, OOM or not. */
int xmem_requeue_decide(const struct xmem_requeue_option *o, const struct xmem_requeue_facts *f,
                        struct xmem_requeue_plan *plan, char *why, size_t whylen);

/* The scontrol calls, in order: mark the AdminComment (while the job still runs, so that a
 * failure later can never lead to a second requeue), requeue held, set the share, release,
 * give back the priority Slurm recomputes at release. */
enum xmem_requeue_step {
    XMEM_REQUEUE_STEP_MARK,     /* arg: the new AdminComment */
    XMEM_REQUEUE_STEP_HOLD,     /* arg unused */
    XMEM_REQUEUE_STEP_SHARE,    /* arg: "shard:10" */
    XMEM_REQUEUE_STEP_RELEASE,  /* arg unused */
    XMEM_REQUEUE_STEP_PRIORITY, /* arg: the priority before the requeue */
};
struct xmem_requeue_argv {
    uint32_t job_id; /* set by the caller */
    char job[32];
    char value[2600];
    char *argv[5];
};
int xmem_requeue_argv(const char *scontrol, enum xmem_requeue_step step, const char *arg,
                      struct xmem_requeue_argv *a);

#endif
