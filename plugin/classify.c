/*
 * classify.c — which GPU requests xmem sizes: one GPU on one node, and several GPUs or nodes
 * (one rank per GPU, profiled at that world size). The controller's job_submit.lua decides
 * what becomes of each on the job it receives (a share per node, or the whole request, with
 * the reason); this copy lets sbatch skip a profile whose result could not be used and say
 * why. The counting is the shared parser's (xmem_job_shape_of), as xmemd reads it back.
 */
#include <stdio.h>
#include <string.h>

#include "classify.h"

int xmem_request_gpu(const struct xmem_cmdline *c, char *buf, size_t len)
{
    struct xmem_job_shape s;

    if (xmem_job_shape_of(c, &s) < 0 || s.gpus_per_node <= 0)
        return -1;
    return xmem_job_shape_text(&s, buf, len);
}

int xmem_request_classify(const struct xmem_cmdline *c, char *why, size_t whylen)
{
    struct xmem_job_shape s;

    if (xmem_job_shape_of(c, &s) < 0) {
        snprintf(why, whylen, "the job's GPU, task or node counts are not numbers xmem reads");
        return XMEM_REQ_NONE;
    }
    if (s.shared) {
        snprintf(why, whylen, "the job already asks for a GPU share (%s)", c->gres);
        return XMEM_REQ_SHARED;
    }
    if (s.gpus_per_node == 0) {
        snprintf(why, whylen, "the job asks for no GPU");
        return XMEM_REQ_NONE;
    }
    if (s.gpus_per_node > 1 || s.nodes > 1) {
        snprintf(why, whylen, "the job asks for %ld GPU%s on each of %ld node%s", s.gpus_per_node,
                 s.gpus_per_node > 1 ? "s" : "", s.nodes, s.nodes > 1 ? "s" : "");
        return XMEM_REQ_MULTI;
    }
    snprintf(why, whylen, "one GPU");
    return XMEM_REQ_SINGLE;
}
