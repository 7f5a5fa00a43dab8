/*
 * requeue.c — what to do when a job that ran on a GPU share ends with a CUDA OOM: the site
 * option (plugstack oom_requeue=whole|factor:F|off), reading what job_submit.lua wrote in the
 * job's AdminComment (root's: a user can edit their Comment, so it is never read), the decision,
 * the mark that keeps it to once, and the scontrol command lines. No SPANK here (the unit tests
 * link it); requeue_step.c runs the commands from slurmstepd.
 *
 * Why the rerun keeps its share kind: Slurm 22.05 refuses to turn a shard or mps job into a
 * gpu one (`scontrol update TresPerNode=gres:gpu:1` answers "Invalid generic resource"), so
 * "whole" is every share of one GPU (shard:10 where a GPU has 10 shards): no other job can
 * get a share of that GPU, nor the GPU itself, while the rerun holds them (docs/enforcement.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "defaults.h"
#include "requeue.h"
#include "value.h"
#include "xmem_script.h" /* XMEM_SHAPE_MAX */

int xmem_requeue_option_parse(const char *v, struct xmem_requeue_option *o, char *err,
                              size_t errlen)
{
    char *end;
    double f;

    o->factor = 0;
    if (strcmp(v, "whole") == 0 || strcmp(v, "off") == 0) {
        o->mode = v[0] == 'w' ? XMEM_REQUEUE_WHOLE : XMEM_REQUEUE_OFF;
        return 0;
    }
    if (strncmp(v, "factor:", 7) == 0) {
        f = strtod(v + 7, &end);
        if (end != v + 7 && *end == '\0' && f > 1 && f <= XMEM_REQUEUE_MAX_FACTOR) {
            o->mode = XMEM_REQUEUE_FACTOR;
            o->factor = f;
            return 0;
        }
    }
    snprintf(err, errlen,
             "xmem: oom_requeue: invalid value: %s (whole, off, or factor:F with F above 1 and at "
             "most %d)",
             v, XMEM_REQUEUE_MAX_FACTOR);
    return -1;
}

/* "shard:3" or "mps:30" into its kind and count; -1 for anything else. */
static int share_parse(const char *s, size_t len, struct xmem_share *share)
{
    char buf[32];
    uint64_t n;
    const char *colon;

    if (len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    colon = strchr(buf, ':');
    if (colon == NULL || (strncmp(buf, "shard:", 6) != 0 && strncmp(buf, "mps:", 4) != 0))
        return -1;
    if (xmem_decimal_parse(colon + 1, XMEM_REQUEUE_MAX_SHARE_COUNT, &n) < 0 || n == 0 ||
        colon[1] == '0')
        return -1;
    snprintf(share->kind, sizeof(share->kind), "%.*s", (int)(colon - buf), buf);
    share->count = (unsigned)n;
    return 0;
}

/* "3000M" into MiB: a number (xmem_decimal_parse) and M, above 0. */
static int mib(const char *s, unsigned long long *out)
{
    char digits[32];
    size_t len = strlen(s);
    uint64_t v;

    if (len < 2 || len >= sizeof(digits) || s[len - 1] != 'M')
        return -1;
    memcpy(digits, s, len - 1);
    digits[len - 1] = '\0';
    if (xmem_decimal_parse(digits, XMEM_REQUEUE_MAX_LIMIT_MB, &v) < 0 || v == 0)
        return -1;
    *out = v;
    return 0;
}

/* The value of " key" up to the next blank, inside [s, s+len). */
static int field(const char *s, size_t len, const char *key, char *out, size_t outlen)
{
    size_t klen = strlen(key);

    for (const char *p = s; p + klen <= s + len; p++) {
        if (strncmp(p, key, klen) != 0 || (p != s && p[-1] != ' '))
            continue;
        size_t vlen = strcspn(p + klen, " ;");
        if (p + klen + vlen > s + len)
            vlen = (size_t)(s + len - (p + klen));
        if (vlen == 0 || vlen >= outlen)
            return -1;
        snprintf(out, outlen, "%.*s", (int)vlen, p + klen);
        return 0;
    }
    return -1;
}

/* The last "xmem: " part of a comment (job_submit.lua appends its own at the end). */
static const char *last_xmem_part(const char *comment, const char *tag, size_t *len)
{
    const char *found = NULL;

    for (const char *p = comment; (p = strstr(p, tag)) != NULL; p++)
        if (p == comment || (p >= comment + 2 && strncmp(p - 2, "; ", 2) == 0))
            found = p;
    if (found != NULL)
        *len = strcspn(found, ";");
    return found;
}

bool xmem_comment_packed(const char *comment, struct xmem_packed *p)
{
    char request[96], limit[32], estimate[32];
    const char *part, *arrow, *key;
    struct xmem_share share;
    size_t len;

    memset(p, 0, sizeof(*p));
    part = last_xmem_part(comment, "xmem: estimate=", &len);
    if (part == NULL || field(part, len, "request=", request, sizeof(request)) < 0 ||
        field(part, len, "limit=", limit, sizeof(limit)) < 0)
        return false;
    arrow = strstr(request, "->");
    if (arrow == NULL || share_parse(arrow + 2, strlen(arrow + 2), &p->share) < 0)
        return false;
    /* job_submit.lua packs only an untyped single GPU (a share cannot keep a GPU type); for
     * srun outside a job cli_filter.lua has already asked for the share it recomputes. */
    if ((size_t)(arrow - request) >= sizeof(p->original) ||
        (strncmp(request, "gres:gpu:1->", 12) != 0 && strncmp(request, "gres/gpu:1->", 12) != 0 &&
         ((strncmp(request, "gres:", 5) != 0 && strncmp(request, "gres/", 5) != 0) ||
          share_parse(request + 5, (size_t)(arrow - request) - 5, &share) < 0)))
        return false;
    snprintf(p->original, sizeof(p->original), "%.*s", (int)(arrow - request), request);
    if (mib(limit, &p->limit_mb) < 0)
        return false;
    if (field(part, len, "estimate=", estimate, sizeof(estimate)) < 0 ||
        mib(estimate, &p->estimate_mb) < 0)
        p->estimate_mb = 0;
    /* nodes=N, job_submit.lua's for one GPU on each of N nodes (xmem_decimal's rule). */
    p->nodes = 1;
    if (field(part, len, "nodes=", request, sizeof(request)) == 0) {
        uint64_t n;
        if (xmem_decimal_parse(request, XMEM_SHAPE_MAX, &n) < 0 || n == 0)
            return false;
        p->nodes = (unsigned)n;
    }
    /* The site's required level, when it required one. A value too long or empty for any
     * level name becomes "?": no level meets it (xmem_enforce_meets), the node refuses. */
    if (field(part, len, "required=", p->required, sizeof(p->required)) < 0 &&
        (key = strstr(part, " required=")) != NULL && key < part + len)
        snprintf(p->required, sizeof(p->required), "?");
    return true;
}

bool xmem_record_limit(const char *comment, bool restarted, struct xmem_record_limit *r)
{
    struct xmem_packed packed;
    struct xmem_requeue_plan plan;

    memset(r, 0, sizeof(*r));
    if (!xmem_comment_packed(comment, &packed))
        return false;
    r->limit_mb = packed.limit_mb;
    r->nodes = packed.nodes;
    snprintf(r->required, sizeof(r->required), "%s", packed.required);
    /* A rerun xmem requeued: the mark's limit, none when whole. A mark without a restart is
     * the first run's own, about to be requeued: not its limit yet. */
    if (restarted && xmem_requeue_mark_parse(comment, &plan) == 0) {
        r->rerun = 1;
        r->limit_mb = plan.whole ? 0 : plan.to_limit_mb;
    }
    return true;
}

int xmem_node_share_per_gpu(const char *gres, const char *kind, unsigned *per_gpu)
{
    unsigned long gpus = 0, shares = 0;
    size_t klen = strlen(kind);

    for (const char *item = gres; item != NULL && *item != '\0';) {
        const char *next = strchr(item, ','), *stop = item + strcspn(item, ",(");
        const char *colon = stop;
        while (colon > item && colon[-1] != ':')
            colon--;
        unsigned long n = colon > item ? strtoul(colon, NULL, 10) : 0;
        if (strncmp(item, "gpu:", 4) == 0)
            gpus += n;
        else if (strncmp(item, kind, klen) == 0 && item[klen] == ':')
            shares += n;
        item = next ? next + 1 : NULL;
    }
    if (gpus == 0 || shares == 0 || shares % gpus != 0)
        return -1;
    *per_gpu = (unsigned)(shares / gpus);
    return 0;
}

int xmem_nodes_share_per_gpu(const char *show_node, const char *kind, unsigned *per_gpu)
{
    char gres[512];
    unsigned n, found = 0;

    for (const char *p = strstr(show_node, "   Gres="); p != NULL; p = strstr(p + 8, "   Gres=")) {
        snprintf(gres, sizeof(gres), "%.*s", (int)strcspn(p + 8, " \n"), p + 8);
        if (xmem_node_share_per_gpu(gres, kind, &n) < 0 || (found && n != *per_gpu))
            return -1;
        *per_gpu = n;
        found = 1;
    }
    return found ? 0 : -1;
}

int xmem_requeue_mark_format(const struct xmem_requeue_plan *plan, char *buf, size_t len)
{
    int n;

    if (plan->reason[0] == '\0' || strpbrk(plan->reason, ";=") != NULL)
        return -1;
    if (plan->whole)
        n = snprintf(buf, len, "%s%s from=%s:%u limit=%lluM to=%s:%u whole", XMEM_REQUEUE_MARK,
                     plan->reason, plan->from.kind, plan->from.count, plan->from_limit_mb,
                     plan->to.kind, plan->to.count);
    else
        n = snprintf(buf, len, "%s%s from=%s:%u limit=%lluM to=%s:%u limit=%lluM",
                     XMEM_REQUEUE_MARK, plan->reason, plan->from.kind, plan->from.count,
                     plan->from_limit_mb, plan->to.kind, plan->to.count, plan->to_limit_mb);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

bool xmem_comment_marked(const char *comment)
{
    size_t len;

    return last_xmem_part(comment, XMEM_REQUEUE_MARK, &len) != NULL;
}

int xmem_requeue_mark_parse(const char *comment, struct xmem_requeue_plan *plan)
{
    char from[32], to[32], limit[32];
    const char *part, *rest;
    size_t len;

    memset(plan, 0, sizeof(*plan));
    part = last_xmem_part(comment, XMEM_REQUEUE_MARK, &len);
    if (part == NULL || (rest = strstr(part, " from=")) == NULL || rest > part + len ||
        rest - part - strlen(XMEM_REQUEUE_MARK) >= sizeof(plan->reason) ||
        field(part, len, "from=", from, sizeof(from)) < 0 ||
        field(part, len, "to=", to, sizeof(to)) < 0 ||
        share_parse(from, strlen(from), &plan->from) < 0 ||
        share_parse(to, strlen(to), &plan->to) < 0)
        return -1;
    snprintf(plan->reason, sizeof(plan->reason), "%.*s",
             (int)(rest - part - strlen(XMEM_REQUEUE_MARK)), part + strlen(XMEM_REQUEUE_MARK));
    /* The first limit= is the first run's, the one after to= the rerun's. */
    rest = strstr(part, " to=");
    if (rest == NULL || rest > part + len)
        return -1;
    if (field(part, (size_t)(rest - part), "limit=", limit, sizeof(limit)) < 0 ||
        mib(limit, &plan->from_limit_mb) < 0)
        return -1;
    plan->whole = strncmp(part + len - 6, " whole", 6) == 0;
    if (plan->whole)
        return 0;
    if (field(rest, (size_t)(part + len - rest), "limit=", limit, sizeof(limit)) < 0)
        return -1;
    return mib(limit, &plan->to_limit_mb);
}

bool xmem_requeue_decide(const struct xmem_requeue_option *o, const struct xmem_requeue_facts *f,
                         struct xmem_requeue_plan *plan, char *why, size_t whylen)
{
    struct xmem_packed packed;
    char allocated[48];
    double count;

    memset(plan, 0, sizeof(*plan));
    why[0] = '\0';
    if (o != NULL && (o->mode == XMEM_REQUEUE_OFF || !f->cuda_oom || !f->on_share))
        return false; /* nothing to say: the usual case */
    if (xmem_comment_marked(f->admin_comment)) {
        snprintf(why, whylen, "already requeued once after a CUDA OOM");
        return false;
    }
    if (!f->batch) {
        snprintf(why, whylen, "not a batch job (Slurm requeues batch jobs only)");
        return false;
    }
    if (!xmem_comment_packed(f->admin_comment, &packed)) {
        snprintf(why, whylen, "its AdminComment does not say which share xmem gave it");
        return false;
    }
    snprintf(allocated, sizeof(allocated), "gres:%s:%u", packed.share.kind, packed.share.count);
    if (strcmp(allocated, f->tres_per_node) != 0) {
        snprintf(why, whylen, "its AdminComment names %s, but it ran on %s", allocated,
                 f->tres_per_node[0] ? f->tres_per_node : "an unknown request");
        return false;
    }
    if (f->per_gpu == 0) {
        snprintf(why, whylen, "the shares per GPU of its nodes are unknown or differ");
        return false;
    }
    if (packed.share.count >= f->per_gpu) {
        snprintf(why, whylen, "it already had a whole GPU");
        return false;
    }
    snprintf(plan->reason, sizeof(plan->reason), "%s", XMEM_REQUEUE_OOM);
    plan->from = packed.share;
    plan->from_limit_mb = packed.limit_mb;
    plan->to = packed.share;
    count = o != NULL && o->mode == XMEM_REQUEUE_FACTOR ? ceil(packed.share.count * o->factor)
                                                        : f->per_gpu;
    plan->whole = count >= f->per_gpu;
    plan->to.count = plan->whole ? f->per_gpu : (unsigned)count;
    if (!plan->whole)
        plan->to_limit_mb = (unsigned long long)ceil((double)packed.limit_mb * o->factor);
    return true;
}

/* Fills argv (at most 5 entries with the NULL) for one step of the requeue. */
int xmem_requeue_argv(const char *scontrol, enum xmem_requeue_step step, const char *arg,
                      struct xmem_requeue_argv *a)
{
    int n = 0, w = 0;

    a->argv[n++] = (char *)scontrol;
    switch (step) {
    case XMEM_REQUEUE_STEP_MARK:
        w = snprintf(a->value, sizeof(a->value), "AdminComment=%s", arg);
        a->argv[n++] = "update";
        break;
    case XMEM_REQUEUE_STEP_HOLD:
        a->argv[n++] = "requeuehold";
        break;
    case XMEM_REQUEUE_STEP_SHARE:
        w = snprintf(a->value, sizeof(a->value), "TresPerNode=gres:%s", arg);
        a->argv[n++] = "update";
        break;
    case XMEM_REQUEUE_STEP_RELEASE:
        a->argv[n++] = "release";
        break;
    case XMEM_REQUEUE_STEP_PRIORITY:
        w = snprintf(a->value, sizeof(a->value), "Priority=%s", arg);
        a->argv[n++] = "update";
        break;
    default:
        return -1;
    }
    if (w < 0 || (size_t)w >= sizeof(a->value))
        return -1; /* too long to keep whole: no requeue rather than a cut record */
    if (strcmp(a->argv[1], "update") == 0) {
        snprintf(a->job, sizeof(a->job), "JobId=%u", (unsigned)a->job_id);
        a->argv[n++] = a->job;
        a->argv[n++] = a->value;
    } else {
        snprintf(a->job, sizeof(a->job), "%u", (unsigned)a->job_id);
        a->argv[n++] = a->job;
    }
    a->argv[n] = NULL;
    return 0;
}
