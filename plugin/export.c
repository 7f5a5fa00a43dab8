/*
 * export.c — the environment sbatch exports to a job, from its --export value
 * (sbatch(1), 22.05): ALL (the default) exports the whole submission environment; NONE
 * and NIL export none of it (only SLURM_* variables, which no estimate uses); any other
 * list exports only the variables it names, "NAME" with its submission value and
 * "NAME=value" with that value, and ALL in the list adds the whole environment first.
 * The value comes from --export, else SBATCH_EXPORT, else an #SBATCH --export line.
 *
 * Items are split at commas, as sbatch does; a value that contains a comma cannot be
 * given this way in sbatch either (it would start a new item).
 */
#include <stdlib.h>
#include <string.h>

#include "export.h"

const char *xmem_export_spec(const struct xmem_cmdline *c, const char *sbatch_export)
{
    if (c->export_env != NULL)
        return c->export_env;
    if (sbatch_export != NULL && sbatch_export[0] != '\0')
        return sbatch_export;
    if (c->script_export_env != NULL)
        return c->script_export_env;
    return "ALL";
}

/* Removes an earlier NAME=... from env, so the last item for a name wins. */
static void drop_name(char **env, int *n, const char *name, size_t len)
{
    for (int i = 0; i < *n; i++) {
        if (strncmp(env[i], name, len) == 0 && env[i][len] == '=') {
            free(env[i]);
            memmove(env + i, env + i + 1, sizeof(*env) * (size_t)(*n - i));
            (*n)--;
            return;
        }
    }
}

static const char *lookup(char *const *environ_, const char *name, size_t len)
{
    for (char *const *e = environ_; e != NULL && *e != NULL; e++)
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return *e;
    return NULL;
}

static int add_item(char ***env, int *n, char *const *environ_, const char *item, size_t len)
{
    const char *eq = memchr(item, '=', len);
    size_t name_len = eq ? (size_t)(eq - item) : len;
    const char *from;

    if (name_len == 0)
        return 0;
    if (len == 3 && strncmp(item, "ALL", 3) == 0) {
        for (char *const *e = environ_; e != NULL && *e != NULL; e++) {
            const char *q = strchr(*e, '=');
            if (q != NULL) {
                drop_name(*env, n, *e, (size_t)(q - *e));
                if (xmem_argv_push(env, n, *e, strlen(*e)) < 0)
                    return -1;
            }
        }
        return 0;
    }
    drop_name(*env, n, item, name_len);
    if (eq != NULL)
        return xmem_argv_push(env, n, item, len);
    from = lookup(environ_, item, name_len);
    return from ? xmem_argv_push(env, n, from, strlen(from)) : 0;
}

char **xmem_export_env(const char *spec, char *const *environ_)
{
    char **env = calloc(1, sizeof(*env));
    int n = 0;

    if (env == NULL)
        return NULL;
    if (spec == NULL || spec[0] == '\0')
        spec = "ALL";
    if (strcmp(spec, "NONE") == 0 || strcmp(spec, "NIL") == 0)
        return env;
    for (const char *p = spec; *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);

        if (add_item(&env, &n, environ_, p, len) < 0) {
            xmem_argv_free(env);
            return NULL;
        }
        p += len + (comma != NULL);
    }
    return env;
}
