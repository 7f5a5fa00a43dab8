/*
 * requeue.h — after a CUDA OOM on a share: the option, the packing record and the requeue
 * mark in the job's AdminComment, the decision, the scontrol command lines (requeue.c;
 * requeue_step.c runs them).
 *
 * Contract: the parsers and formatters return 0 or -1 (xmem_requeue_option_parse with a
 * one-line message starting with "xmem: " in err); xmem_comment_packed, xmem_record_limit,
 * xmem_comment_marked and xmem_requeue_decide are bool predicates, true when the thing they
 * name holds.
 */
#ifndef XMEM_REQUEUE_H
#define XMEM_REQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "settings.h" /* struct xmem_requeue_option: plugstack oom_requeue= */

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
    unsigned long long limit_mb;    /* the limit the job was held to */
    unsigned long long estimate_mb; /* the estimate it was sized from; 0: not in the record */
    char required[16];              /* required=LEVEL: the site's required level; "" none */
    unsigned nodes;                 /* nodes=N: a share on each of N nodes (multi-GPU); 1 */
};
/* True when the comment's last xmem part says the job was packed, in a form xmem writes
 * (p filled). */
bool xmem_comment_packed(const char *comment, struct xmem_packed *p);
/* What a packed job is held to on its node, from root's AdminComment only (never the
 * client's SPANK environment): the packing record's limit and required level, or after a
 * requeue (restarted: SLURM_RESTART_COUNT > 0) the mark's limit, 0 for a whole rerun. */
struct xmem_record_limit {
    unsigned long long limit_mb;
    int rerun;         /* 1: the limit is the requeue mark's */
    char required[16]; /* "" when the site required no level */
    unsigned nodes;    /* the nodes the share is on, one rank each (xmem_packed) */
};
/* True when xmem packed the job (r filled), false when the comment says it did not. */
bool xmem_record_limit(const char *comment, bool restarted, struct xmem_record_limit *r);
/* True when the comment carries XMEM_REQUEUE_MARK. */
bool xmem_comment_marked(const char *comment);
/* A node's shares of kind per GPU from its Gres= ("gpu:2,shard:20" -> 10); 0 or -1. */
int xmem_node_share_per_gpu(const char *gres, const char *kind, unsigned *per_gpu);
/* The same for every node `scontrol show node LIST` printed (each "   Gres=" line): a
 * multi-node job's rerun asks for shares per node, so its nodes must agree. 0, or -1 when
 * a node's is unknown or two differ. */
int xmem_nodes_share_per_gpu(const char *show_node, const char *kind, unsigned *per_gpu);

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
/* True: requeue with plan (reason XMEM_REQUEUE_OOM). False: not; why says why when it is
 * worth a log line ("" otherwise). With o NULL: requeue whole for another reason, OOM or
 * not. */
bool xmem_requeue_decide(const struct xmem_requeue_option *o, const struct xmem_requeue_facts *f,
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
