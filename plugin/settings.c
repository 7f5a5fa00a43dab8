/*
 * settings.c — plugstack.conf arguments, parsed strictly from one table: an unknown key
 * or a bad value stops the plugin from loading with "xmem: <key>: invalid value: <v>".
 * All keys are admin-only (plugstack.conf is the admin's file).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "defaults.h"
#include "requeue.h"
#include "settings.h"
#include "../daemon/contract/enforcement.h"

/* KEY_PATH: an absolute path. KEY_LIB: what dlopen takes (an absolute path or a bare file
 * name searched the usual way), or "off". KEY_PROGRAM: an absolute path or a bare name
 * searched on slurmstepd's PATH. */
enum key_type { KEY_PATH, KEY_LIB, KEY_PROGRAM, KEY_INT, KEY_ENUM, KEY_REQUEUE };

struct key_choice {
    const char *name;
    int value;
};

static const struct key_choice on_failure_choices[] = {
    {"keep", XMEM_ON_FAILURE_KEEP}, {"reject", XMEM_ON_FAILURE_REJECT}, {NULL, 0}};
/* auto tries the best level first, so it is the cap at the best one. */
static const struct key_choice enforce_choices[] = {{"auto", XMEM_ENFORCE_DMEM},
                                                    {"dmem", XMEM_ENFORCE_DMEM},
                                                    {"mps-server", XMEM_ENFORCE_MPS_SERVER},
                                                    {"client", XMEM_ENFORCE_CLIENT},
                                                    {"none", XMEM_ENFORCE_NONE},
                                                    {NULL, 0}};
static const struct key_choice bool_choices[] = {{"0", 0},     {"1", 1},    {"no", 0}, {"yes", 1},
                                                 {"false", 0}, {"true", 1}, {NULL, 0}};

static const struct key {
    const char *name;
    enum key_type type;
    size_t offset;
    size_t size;                      /* KEY_PATH, KEY_LIB: the field's size */
    long min, max;                    /* KEY_INT */
    const struct key_choice *choices; /* KEY_ENUM */
} keys[] = {
#define FIELD(f) offsetof(struct xmem_settings, f), sizeof(((struct xmem_settings *)0)->f)
    {"socket", KEY_PATH, FIELD(socket), 0, 0, NULL},
    {"timeout", KEY_INT, FIELD(timeout_s), 1, XMEM_PLUGIN_MAX_TIMEOUT_S, NULL},
    {"on_failure", KEY_ENUM, FIELD(on_failure), 0, 0, on_failure_choices},
    {"steps", KEY_INT, FIELD(steps), 1, XMEM_MAX_STEPS, NULL},
    /* The older name of steps=, still read so existing plugstack.conf lines keep working. */
    {"iterations", KEY_INT, FIELD(steps), 1, XMEM_MAX_STEPS, NULL},
    {"verbose", KEY_ENUM, FIELD(verbose), 0, 0, bool_choices},
    {"nvml", KEY_LIB, FIELD(nvml), 0, 0, NULL},
    {"nvml_interval_ms", KEY_INT, FIELD(nvml_interval_ms), XMEM_PLUGIN_MIN_NVML_INTERVAL_MS,
     XMEM_PLUGIN_MAX_NVML_INTERVAL_MS, NULL},
    {"scontrol", KEY_PATH, FIELD(scontrol), 0, 0, NULL},
    {"squeue", KEY_PATH, FIELD(squeue), 0, 0, NULL},
    {"enforce", KEY_ENUM, FIELD(enforce), 0, 0, enforce_choices},
    {"cgroup_root", KEY_PATH, FIELD(cgroup_root), 0, 0, NULL},
    {"job_cgroup", KEY_PATH, FIELD(job_cgroup), 0, 0, NULL},
    {"mps_control", KEY_PROGRAM, FIELD(mps_control), 0, 0, NULL},
    {"oom_requeue", KEY_REQUEUE, FIELD(oom_requeue), 0, 0, NULL},
#undef FIELD
};

void xmem_settings_init(struct xmem_settings *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->socket, sizeof(s->socket), "%s", XMEM_DEFAULT_SOCKET);
    s->timeout_s = XMEM_PLUGIN_DEFAULT_TIMEOUT_S;
    s->on_failure = XMEM_ON_FAILURE_KEEP;
    s->steps = 0;
    s->verbose = 0;
    snprintf(s->nvml, sizeof(s->nvml), "%s", XMEM_PLUGIN_DEFAULT_NVML);
    s->nvml_interval_ms = XMEM_PLUGIN_DEFAULT_NVML_INTERVAL_MS;
    snprintf(s->scontrol, sizeof(s->scontrol), "%s", XMEM_PLUGIN_DEFAULT_SCONTROL);
    snprintf(s->squeue, sizeof(s->squeue), "%s", XMEM_PLUGIN_DEFAULT_SQUEUE);
    s->enforce = XMEM_ENFORCE_DMEM;
    snprintf(s->cgroup_root, sizeof(s->cgroup_root), "%s", XMEM_PLUGIN_DEFAULT_CGROUP_ROOT);
    s->job_cgroup[0] = '\0';
    snprintf(s->mps_control, sizeof(s->mps_control), "%s", XMEM_PLUGIN_DEFAULT_MPS_CONTROL);
    s->oom_requeue.mode = XMEM_REQUEUE_WHOLE;
}

static int set_key(struct xmem_settings *s, const struct key *k, const char *v, char *err,
                   size_t errlen)
{
    char *field = (char *)s + k->offset, *end;
    const struct key_choice *c;
    long n;

    switch (k->type) {
    case KEY_PATH:
        if (v[0] != '/' || strlen(v) >= k->size)
            goto bad;
        snprintf(field, k->size, "%s", v);
        return 0;
    case KEY_LIB:
    case KEY_PROGRAM:
        if (strlen(v) >= k->size || (v[0] != '/' && strchr(v, '/') != NULL))
            goto bad;
        snprintf(field, k->size, "%s", v);
        return 0;
    case KEY_INT:
        errno = 0;
        n = strtol(v, &end, 10);
        if (errno != 0 || end == v || *end != '\0' || n < k->min || n > k->max)
            goto bad;
        *(int *)field = (int)n;
        return 0;
    case KEY_ENUM:
        for (c = k->choices; c->name != NULL; c++) {
            if (strcmp(c->name, v) == 0) {
                *(int *)field = c->value;
                return 0;
            }
        }
        goto bad;
    case KEY_REQUEUE: /* its own message: the value has a form, not a list */
        return xmem_requeue_option_parse(v, (struct xmem_requeue_option *)field, err, errlen);
    }
bad:
    switch (k->type) {
    case KEY_PATH:
        snprintf(err, errlen, "xmem: %s: invalid value: %s (an absolute path, at most %zu bytes)",
                 k->name, v, k->size - 1);
        break;
    case KEY_LIB:
        snprintf(err, errlen,
                 "xmem: %s: invalid value: %s (off, a library file name or an "
                 "absolute path, at most %zu bytes)",
                 k->name, v, k->size - 1);
        break;
    case KEY_PROGRAM:
        snprintf(err, errlen,
                 "xmem: %s: invalid value: %s (a program name found on PATH or an absolute "
                 "path, at most %zu bytes)",
                 k->name, v, k->size - 1);
        break;
    case KEY_INT:
        snprintf(err, errlen, "xmem: %s: invalid value: %s (an integer from %ld to %ld)", k->name,
                 v, k->min, k->max);
        break;
    case KEY_REQUEUE:
        break;
    case KEY_ENUM: {
        char choices[128] = "";
        for (c = k->choices; c->name != NULL; c++) {
            strncat(choices, c->name, sizeof(choices) - strlen(choices) - 2);
            if (c[1].name != NULL)
                strncat(choices, "|", sizeof(choices) - strlen(choices) - 1);
        }
        snprintf(err, errlen, "xmem: %s: invalid value: %s (one of %s)", k->name, v, choices);
        break;
    }
    }
    return -1;
}

int xmem_settings_parse(struct xmem_settings *s, int ac, char **av, char *err, size_t errlen)
{
    int i;
    size_t j;

    for (i = 0; i < ac; i++) {
        const char *eq = strchr(av[i], '=');
        size_t klen = eq ? (size_t)(eq - av[i]) : strlen(av[i]);
        const struct key *k = NULL;

        for (j = 0; j < sizeof(keys) / sizeof(keys[0]); j++) {
            if (strlen(keys[j].name) == klen && strncmp(keys[j].name, av[i], klen) == 0) {
                k = &keys[j];
                break;
            }
        }
        if (k == NULL) {
            snprintf(
                err, errlen,
                "xmem: plugstack.conf: unknown argument '%.*s' (known: socket, timeout, "
                "on_failure, steps, verbose, nvml, nvml_interval_ms, scontrol, squeue, enforce, "
                "cgroup_root, job_cgroup, mps_control, oom_requeue)",
                (int)klen, av[i]);
            return -1;
        }
        if (eq == NULL || eq[1] == '\0') {
            snprintf(err, errlen, "xmem: %s: missing value (write %s=VALUE in plugstack.conf)",
                     k->name, k->name);
            return -1;
        }
        if (set_key(s, k, eq + 1, err, errlen) < 0)
            return -1;
    }
    return 0;
}
