/*
 * classify.h — which GPU request a submission makes (classify.c).
 *
 * Contract: xmem_request_classify returns an enum xmem_request_kind; xmem_request_gpu returns
 * 0 or -1. No predicates here.
 */
#ifndef XMEM_CLASSIFY_H
#define XMEM_CLASSIFY_H

#include <stddef.h>

/* The batch-script and command-line parsing the plugin shares with xmemd. */
#include "xmem_script.h"

enum xmem_request_kind {
    XMEM_REQ_NONE = 0,   /* no GPU asked for */
    XMEM_REQ_SINGLE = 1, /* exactly one GPU on one node */
    XMEM_REQ_MULTI = 2,  /* several GPUs or nodes: one rank per GPU (docs/slurm.md) */
    XMEM_REQ_SHARED = 3, /* already a shard/mps request: left unchanged */
};
int xmem_request_classify(const struct xmem_cmdline *c, char *why, size_t whylen);
/* The GPU request in the canonical form a decision is bound to, "gpu:1", "gpu:TYPE:1",
 * "gpu:2" or "gpu:1:nodes:2" (xmem_job_shape_text; job_submit.lua derives the same from the
 * job: xmem_lib.lua request_shape). Returns 0, or -1 when it asks for no GPU, a count is
 * malformed or buf is too small. */
int xmem_request_gpu(const struct xmem_cmdline *c, char *buf, size_t len);

#endif
