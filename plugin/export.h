/*
 * export.h — the job's environment as sbatch exports it (export.c). No 0/-1 functions and
 * no predicates: a value, or NULL.
 */
#ifndef XMEM_EXPORT_H
#define XMEM_EXPORT_H

/* The batch-script and command-line parsing the plugin shares with xmemd. */
#include "xmem_script.h"

/* The --export value in force: the command line's, else SBATCH_EXPORT, else the script's,
 * else "ALL" (sbatch's order). */
const char *xmem_export_spec(const struct xmem_cmdline *c, const char *sbatch_export);
/* The environment sbatch exports to the job for that value, from the submission's
 * environment: a malloc'd NULL-terminated "NAME=value" list (free with xmem_argv_free), or
 * NULL when out of memory. */
char **xmem_export_env(const char *spec, char *const *environ_);

#endif
