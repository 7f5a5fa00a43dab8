/*
 * job_shape.c — how many GPUs a submission asks for on each node and on how many nodes, and
 * so how many ranks its training runs (one per GPU): read from the command line with its
 * #SBATCH lines applied (slurm_cmdline.c), written as the one canonical text the signed
 * decision binds ("gpu:1", "gpu:2", "gpu:1:nodes:2"), and read back by xmemd, which profiles
 * the job at that world size. job_submit.lua builds the same text from the job it receives
 * (xmem_lib.lua, request_shape): docs/slurm.md, "Multi-GPU jobs". The srun in front of a
 * batch script's entrypoint (srun -n 4 python train.py) names the ranks where it counts them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmem_script.h"

/* A positive count ("2", or the minimum of a "2-4" range), or def when absent; -1 malformed. */
static long count_or(const char *v, long def)
{
    char *end;
    long n;

    if (v == NULL)
        return def;
    n = strtol(v, &end, 10);
    if (end == v || n < 0 || n > XMEM_SHAPE_MAX || (*end != '\0' && *end != '-'))
        return -1;
    return n;
}

/* The count of a GPU value "[type:]N" or "type" (one): sets type. -1 when malformed. */
static long gpu_value(const char *v, char *type, size_t typelen)
{
    const char *colon = strrchr(v, ':');
    char *end;
    long n = strtol(colon ? colon + 1 : v, &end, 10);
    int counted = end != (colon ? colon + 1 : v) && *end == '\0';
    size_t tlen = colon ? (size_t)(colon - v) : counted ? 0 : strlen(v);

    if (tlen > 0 && tlen < typelen && type[0] == '\0') {
        memcpy(type, v, tlen);
        type[tlen] = '\0';
    }
    if (!counted)
        return colon ? -1 : 1; /* "a100" is one GPU; "a100:x" is nothing */
    return n >= 0 && n <= XMEM_SHAPE_MAX ? n : -1;
}

/* GPUs per node of a --gres list ("gpu:2,nic:1"); sets s->shared for shard and mps items. */
static long gres_gpus(const char *gres, struct xmem_job_shape *s)
{
    char *copy = strdup(gres), *tok, *save = NULL;
    long total = 0, n;

    if (copy == NULL)
        return -1;
    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (strncmp(tok, "gres:", 5) == 0 || strncmp(tok, "gres/", 5) == 0)
            tok += 5;
        if (strncmp(tok, "shard", 5) == 0 || strncmp(tok, "mps", 3) == 0) {
            s->shared = 1;
        } else if (strcmp(tok, "gpu") == 0) {
            total += 1;
        } else if (strncmp(tok, "gpu:", 4) == 0) {
            n = gpu_value(tok + 4, s->type, sizeof(s->type));
            total = n < 0 || total < 0 ? -1 : total + n;
        }
    }
    free(copy);
    return total;
}

static long ceil_div(long a, long b)
{
    return b > 0 ? (a + b - 1) / b : a;
}

/* Adds n to *total; a malformed part makes the whole malformed. */
static void add(long *total, long n)
{
    *total = n < 0 || *total < 0 ? -1 : *total + n;
}

int xmem_job_shape_of(const struct xmem_cmdline *c, struct xmem_job_shape *s)
{
    long tasks = count_or(c->ntasks, 0), per_node_tasks = count_or(c->ntasks_per_node, 0);

    memset(s, 0, sizeof(*s));
    s->nodes = count_or(c->nodes, 1);
    if (s->nodes <= 0 || tasks < 0 || per_node_tasks < 0)
        return -1;
    if (per_node_tasks == 0) /* sbatch's default: one task per node */
        per_node_tasks = tasks > 0 ? ceil_div(tasks, s->nodes) : 1;
    if (c->gres)
        add(&s->gpus_per_node, gres_gpus(c->gres, s));
    if (c->gpus_per_node)
        add(&s->gpus_per_node, gpu_value(c->gpus_per_node, s->type, sizeof(s->type)));
    if (c->gpus_per_task) {
        long n = gpu_value(c->gpus_per_task, s->type, sizeof(s->type));
        add(&s->gpus_per_node, n < 0 ? -1 : n * per_node_tasks);
    }
    if (c->gpus) { /* per job: spread over the nodes, as Slurm spreads them */
        long n = gpu_value(c->gpus, s->type, sizeof(s->type));
        add(&s->gpus_per_node, n < 0 ? -1 : ceil_div(n, s->nodes));
    }
    return s->gpus_per_node < 0 ? -1 : 0;
}

int xmem_job_shape_text(const struct xmem_job_shape *s, char *buf, size_t len)
{
    int n = snprintf(buf, len, "gpu:%s%s%ld", s->type, s->type[0] ? ":" : "", s->gpus_per_node);

    if (n >= 0 && (size_t)n < len && s->nodes > 1)
        n += snprintf(buf + n, len - (size_t)n, ":nodes:%ld", s->nodes);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A decimal of 1 to 6 digits, at most XMEM_SHAPE_MAX and at least 1; else -1. */
static long small_count(const char *p, size_t len)
{
    long n = 0;

    if (len == 0 || len > 6)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        n = n * 10 + (p[i] - '0');
    }
    return n >= 1 && n <= XMEM_SHAPE_MAX ? n : -1;
}

int xmem_job_shape_parse(const char *text, struct xmem_job_shape *s)
{
    const char *p, *colon, *nodes;
    size_t len;

    memset(s, 0, sizeof(*s));
    s->nodes = 1;
    if (text == NULL || strncmp(text, "gpu:", 4) != 0)
        return -1;
    p = text + 4;
    nodes = strstr(p, ":nodes:");
    len = nodes ? (size_t)(nodes - p) : strlen(p);
    colon = memchr(p, ':', len);
    if (colon != NULL) { /* gpu:TYPE:N */
        if ((size_t)(colon - p) >= sizeof(s->type) || colon == p)
            return -1;
        memcpy(s->type, p, (size_t)(colon - p));
        len -= (size_t)(colon - p) + 1;
        p = colon + 1;
    }
    s->gpus_per_node = small_count(p, len);
    if (nodes != NULL)
        s->nodes = small_count(nodes + 7, strlen(nodes + 7));
    return s->gpus_per_node < 0 || s->nodes < 0 ? -1 : 0;
}

/* torchrun's processes per node ("--nproc-per-node 4", "--nproc_per_node=4"), or 0 when the
 * command is not torchrun or names no number there ("gpu", "auto": one per GPU anyway). */
static long torchrun_nproc(char *const *entry)
{
    const char *b;

    if (entry == NULL || entry[0] == NULL)
        return 0;
    b = strrchr(entry[0], '/');
    if (strcmp(b ? b + 1 : entry[0], "torchrun") != 0)
        return 0;
    for (int i = 1; entry[i] != NULL; i++) {
        const char *a = entry[i], *v = NULL;
        if (strcmp(a, "--nproc-per-node") == 0 || strcmp(a, "--nproc_per_node") == 0)
            v = entry[i + 1];
        else if (strncmp(a, "--nproc-per-node=", 17) == 0 ||
                 strncmp(a, "--nproc_per_node=", 17) == 0)
            v = a + 17;
        if (v != NULL)
            return small_count(v, strlen(v)) > 0 ? small_count(v, strlen(v)) : 0;
        if (a[0] != '-')
            break; /* the training script: what follows are its own arguments */
    }
    return 0;
}

/* Tasks an srun's options ask for: -n N, else --ntasks-per-node N times -N (one node when
 * absent); 0 when they name no count (srun then runs the job's own tasks). */
static long srun_option_tasks(char *const *words, int n)
{
    struct xmem_cmdline c;
    char err[128];
    long tasks, per_node, nodes;

    if (xmem_cmdline_scan(n, words, &c, err, sizeof(err)) < 0)
        return 0;
    tasks = count_or(c.ntasks, 0);
    per_node = count_or(c.ntasks_per_node, 0);
    nodes = count_or(c.nodes, 1);
    if (tasks > 0)
        return tasks;
    return per_node > 0 && nodes > 0 ? per_node * nodes : 0;
}

struct srun_state {
    int line;   /* the entrypoint's line */
    long words; /* the entrypoint's words: the line's last ones */
    long tasks;
};

static int srun_on_line(const char *line, int lineno, void *arg)
{
    struct srun_state *st = arg;
    char **words;
    int n;

    if (lineno != st->line)
        return 0;
    words = xmem_words_split(line, &n);
    /* The wrappers before the command (srun, env, exec, assignments): the first srun's. */
    for (int i = 0; words != NULL && i < n - st->words; i++) {
        const char *b = strrchr(words[i], '/');
        if (strcmp(b ? b + 1 : words[i], "srun") == 0) {
            st->tasks = srun_option_tasks(words + i, n - i);
            break;
        }
    }
    xmem_argv_free(words);
    return 1;
}

long xmem_script_srun_tasks(const char *text, char *const *entry)
{
    struct srun_state st = {0, 0, 0};

    if (text == NULL || entry == NULL)
        return 0;
    while (entry[st.words] != NULL)
        st.words++;
    st.line = xmem_entrypoint_training_line(text, entry);
    if (st.line > 0 && xmem_script_each_line(text, srun_on_line, &st) < 0)
        return 0;
    return st.tasks;
}

long xmem_world_size(const struct xmem_job_shape *s, char *const *entry, long srun_tasks)
{
    long per_process = torchrun_nproc(entry), per_node = per_process;

    if (srun_tasks > 0) /* srun starts the ranks, or one torchrun per task */
        return srun_tasks * (per_process > 0 ? per_process : 1);
    if (per_node == 0)
        per_node = s->gpus_per_node > 0 ? s->gpus_per_node : 1;
    return per_node * (s->nodes > 0 ? s->nodes : 1);
}
