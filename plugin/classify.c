/*
 * classify.c — which GPU requests version 1 rewrites: exactly one GPU on one node
 * (--gres=gpu:1, --gpus=1, --gpus-per-node=1, --gpus-per-task=1 with one task). The
 * controller's job_submit.lua makes the same decision on the job it receives; this copy
 * lets sbatch skip a profile whose result could not be used and say why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"

/* Count of a "[type:]N" or "N" value; "gpu" alone in --gres means 1. -1 if malformed. */
static long count_of(const char *v, int bare_is_one)
{
    const char *c = strrchr(v, ':');
    char *end;
    long n;

    if (c == NULL) {
        n = strtol(v, &end, 10);
        if (end != v && *end == '\0')
            return n;
        return bare_is_one ? 1 : -1; /* "a100" (type only) in --gpus is one GPU too */
    }
    n = strtol(c + 1, &end, 10);
    if (end == c + 1 || *end != '\0')
        return bare_is_one ? 1 : -1; /* gpu:a100 */
    return n;
}

/* GPUs asked by a --gres list ("gpu:1,shard:2" style); sets *shared for shard/mps. */
static long gres_gpus(const char *gres, int *shared)
{
    char *copy = strdup(gres), *tok, *save = NULL;
    long total = 0;

    if (copy == NULL)
        return -1;
    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (strncmp(tok, "gres:", 5) == 0)
            tok += 5;
        if (strncmp(tok, "shard", 5) == 0 || strncmp(tok, "mps", 3) == 0)
            *shared = 1;
        else if (strcmp(tok, "gpu") == 0 || strncmp(tok, "gpu:", 4) == 0)
            total += tok[3] == '\0' ? 1 : count_of(tok + 4, 1);
    }
    free(copy);
    return total;
}

static long first_number(const char *v)
{
    return v ? strtol(v, NULL, 10) : 1;
}

/* The type in a GPU count value: "a100:1" and "a100" have type a100, "1" has none. */
static void type_of(const char *v, char *type, size_t len)
{
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : strlen(v);
    char *end;

    type[0] = '\0';
    if (colon == NULL) {
        strtol(v, &end, 10);
        if (end != v && *end == '\0')
            return; /* a count only */
    }
    if (n > 0 && n < len) {
        memcpy(type, v, n);
        type[n] = '\0';
    }
}

/* The type of the gpu item in a --gres list ("gres:gpu:a100:1,nic:1" → a100). */
static void gres_type(const char *gres, char *type, size_t len)
{
    char *copy = strdup(gres), *tok, *save = NULL;

    type[0] = '\0';
    if (copy == NULL)
        return;
    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (strncmp(tok, "gres:", 5) == 0)
            tok += 5;
        if (strncmp(tok, "gpu:", 4) == 0) {
            type_of(tok + 4, type, len);
            break;
        }
    }
    free(copy);
}

int xmem_request_gpu(const struct xmem_cmdline *c, char *buf, size_t len)
{
    char type[64] = "";
    int n;

    if (c->gres)
        gres_type(c->gres, type, sizeof(type));
    else if (c->gpus || c->gpus_per_node || c->gpus_per_task)
        type_of(c->gpus            ? c->gpus
                : c->gpus_per_node ? c->gpus_per_node
                                   : c->gpus_per_task,
                type, sizeof(type));
    n = type[0] ? snprintf(buf, len, "gpu:%s:1", type) : snprintf(buf, len, "gpu:1");
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int xmem_request_classify(const struct xmem_cmdline *c, char *why, size_t whylen)
{
    int shared = 0;
    long gpus = 0, tasks = first_number(c->ntasks);
    const char *what = NULL;

    if (c->gres) {
        gpus += gres_gpus(c->gres, &shared);
        what = c->gres;
    }
    if (c->gpus) {
        gpus += count_of(c->gpus, 1);
        what = c->gpus;
    }
    if (c->gpus_per_node) {
        gpus += count_of(c->gpus_per_node, 1);
        what = c->gpus_per_node;
    }
    if (c->gpus_per_task) {
        gpus += count_of(c->gpus_per_task, 1) * (tasks > 0 ? tasks : 1);
        what = c->gpus_per_task;
    }
    if (shared) {
        snprintf(why, whylen, "the job already asks for a GPU share (%s)", c->gres);
        return XMEM_REQ_SHARED;
    }
    if (gpus == 0) {
        snprintf(why, whylen, "the job asks for no GPU");
        return XMEM_REQ_NONE;
    }
    if (gpus != 1) {
        snprintf(why, whylen, "the job asks for %ld GPUs (%s); xmem rewrites single-GPU requests",
                 gpus, what);
        return XMEM_REQ_MULTI;
    }
    if (first_number(c->nodes) > 1) {
        snprintf(why, whylen, "the job asks for %s nodes; xmem rewrites single-node requests",
                 c->nodes);
        return XMEM_REQ_MULTI;
    }
    snprintf(why, whylen, "one GPU");
    return XMEM_REQ_SINGLE;
}
