/*
 * slurm_cmdline.c — reads the submitting command line the way sbatch/salloc/srun's own getopt
 * does, to find what SPANK does not hand to the allocator context: the batch script (or
 * --wrap, or srun's command), the working directory, the partition and the GPU request.
 *
 * Only which options take a separate argument matters here; the tables come from the
 * 22.05 `--help` of each command. Options are not abbreviated (getopt would accept
 * `--gre`); an abbreviated option that takes a separate argument can make the scan
 * pick the wrong operand, which costs an estimate, never a job.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmem_script.h"

/* Short options that take an argument, per command (getopt: "+a:A:..."). */
static const char *const short_with_arg[] = {
    [XMEM_CMD_SBATCH] = "aAbcdDeiJLMmnNopqStFwxGC",
    [XMEM_CMD_SALLOC] = "AbcdDJLMmnNpqStFwxGC",
    [XMEM_CMD_SRUN] = "AbcdDeiJLMmnNopqSTtwxGCrW",
    [XMEM_CMD_OTHER] = "",
};

/* Long options that take a required argument in sbatch, salloc or srun 22.05. */
static const char *const long_with_arg[] = {
    "account",
    "acctg-freq",
    "array",
    "bb",
    "bbf",
    "bcast-exclude",
    "begin",
    "chdir",
    "cluster-constraint",
    "clusters",
    "comment",
    "constraint",
    "core-spec",
    "cores-per-socket",
    "cpu-freq",
    "cpus-per-gpu",
    "cpus-per-task",
    "deadline",
    "delay-boot",
    "dependency",
    "distribution",
    "epilog",
    "error",
    "exclude",
    "export",
    "export-file",
    "gid",
    "gpu-bind",
    "gpu-freq",
    "gpus",
    "gpus-per-node",
    "gpus-per-socket",
    "gpus-per-task",
    "gres",
    "gres-flags",
    "het-group",
    "input",
    "job-name",
    "jobid",
    "licenses",
    "mail-type",
    "mail-user",
    "mcs-label",
    "mem",
    "mem-per-cpu",
    "mem-per-gpu",
    "mincpus",
    "mpi",
    "nodefile",
    "nodelist",
    "nodes",
    "ntasks",
    "ntasks-per-core",
    "ntasks-per-node",
    "ntasks-per-socket",
    "output",
    "partition",
    "power",
    "priority",
    "profile",
    "prolog",
    "qos",
    "relative",
    "reservation",
    "signal",
    "slurmd-debug",
    "sockets-per-node",
    "switches",
    "task-epilog",
    "task-prolog",
    "thread-spec",
    "threads",
    "threads-per-core",
    "time",
    "time-min",
    "tmp",
    "uid",
    "wckey",
    "wrap",
    NULL,
};

int xmem_command_kind(const char *argv0)
{
    const char *base = strrchr(argv0, '/');

    base = base ? base + 1 : argv0;
    if (strcmp(base, "sbatch") == 0)
        return XMEM_CMD_SBATCH;
    if (strcmp(base, "salloc") == 0)
        return XMEM_CMD_SALLOC;
    if (strcmp(base, "srun") == 0)
        return XMEM_CMD_SRUN;
    return XMEM_CMD_OTHER;
}

static int long_takes_arg(int cmd, const char *name, size_t len)
{
    const char *const *p;

    /* srun --wait=SECONDS takes one; sbatch --wait does not. */
    if (len == 4 && strncmp(name, "wait", 4) == 0)
        return cmd == XMEM_CMD_SRUN;
    for (p = long_with_arg; *p != NULL; p++)
        if (strlen(*p) == len && strncmp(*p, name, len) == 0)
            return 1;
    return 0;
}

/* Records the options xmem cares about. */
static void record(struct xmem_cmdline *c, const char *name, size_t len, char shortopt,
                   const char *val)
{
#define IS(s) (strlen(s) == len && strncmp(name, s, len) == 0)
    if (shortopt == 'D' || (name && IS("chdir")))
        c->chdir = val;
    else if (shortopt == 'p' || (name && IS("partition")))
        c->partition = val;
    else if (shortopt == 'G' || (name && IS("gpus")))
        c->gpus = val;
    else if (shortopt == 'n' || (name && IS("ntasks")))
        c->ntasks = val;
    else if (shortopt == 'N' || (name && IS("nodes")))
        c->nodes = val;
    else if (name && IS("ntasks-per-node"))
        c->ntasks_per_node = val;
    else if (name && IS("gres"))
        c->gres = val;
    else if (name && IS("gpus-per-node"))
        c->gpus_per_node = val;
    else if (name && IS("gpus-per-task"))
        c->gpus_per_task = val;
    else if (name && IS("wrap"))
        c->wrap = val;
    else if (name && IS("export"))
        c->export_env = val;
    else if (name && IS("xmem")) {
        c->xmem = val ? val : "";
        c->xmem_given = 1;
    }
#undef IS
}

/* Scans options in argv[from..argc), stopping at the first operand (stored in *operand). */
static int scan(struct xmem_cmdline *c, int argc, char *const *argv, int from, int *operand,
                char *err, size_t errlen)
{
    const char *shorts = short_with_arg[c->command];
    int i;

    *operand = -1;
    for (i = from; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--") == 0) {
            *operand = i + 1 < argc ? i + 1 : -1;
            return 0;
        }
        if (a[0] != '-' || a[1] == '\0') {
            *operand = i;
            return 0;
        }
        if (a[1] == '-') {
            const char *name = a + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            const char *val = eq ? eq + 1 : NULL;

            if (val == NULL && long_takes_arg(c->command, name, len)) {
                if (i + 1 >= argc) {
                    snprintf(err, errlen, "xmem: option --%.*s needs a value", (int)len, name);
                    return -1;
                }
                val = argv[++i];
            }
            record(c, name, len, 0, val);
            continue;
        }
        /* A cluster of short options: -Hp debug, -pdebug, -n4. */
        for (const char *p = a + 1; *p != '\0'; p++) {
            if (strchr(shorts, *p) == NULL)
                continue;
            if (p[1] != '\0') {
                record(c, NULL, 0, *p, p + 1);
            } else {
                if (i + 1 >= argc) {
                    snprintf(err, errlen, "xmem: option -%c needs a value", *p);
                    return -1;
                }
                record(c, NULL, 0, *p, argv[++i]);
            }
            break;
        }
    }
    return 0;
}

int xmem_cmdline_scan(int argc, char *const *argv, struct xmem_cmdline *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->first_operand = -1;
    if (argc < 1 || argv[0] == NULL) {
        snprintf(err, errlen, "xmem: empty command line");
        return -1;
    }
    c->command = xmem_command_kind(argv[0]);
    return scan(c, argc, argv, 1, &c->first_operand, err, errlen);
}

void xmem_cmdline_apply_script(struct xmem_cmdline *c, char **script_argv, int n)
{
    struct xmem_cmdline s;
    char **all;
    int operand, i;
    char err[128];

    if (n <= 0)
        return;
    all = calloc((size_t)n + 2, sizeof(*all));
    if (all == NULL)
        return;
    all[0] = "sbatch";
    for (i = 0; i < n; i++)
        all[i + 1] = script_argv[i];
    memset(&s, 0, sizeof(s));
    s.command = XMEM_CMD_SBATCH;
    if (scan(&s, n + 1, all, 1, &operand, err, sizeof(err)) == 0) {
#define KEEP(f)                                                                                    \
    if (c->f == NULL)                                                                              \
    c->f = s.f
        KEEP(chdir);
        KEEP(partition);
        KEEP(gres);
        KEEP(gpus);
        KEEP(gpus_per_node);
        KEEP(gpus_per_task);
        KEEP(ntasks);
        KEEP(ntasks_per_node);
        KEEP(nodes);
#undef KEEP
        /* Not KEEP: SBATCH_EXPORT comes between the script and the command line. */
        c->script_export_env = s.export_env;
        if (!c->xmem_given && s.xmem_given) {
            c->xmem = s.xmem;
            c->xmem_given = 1;
        }
    }
    free(all);
}

int xmem_cmdline_read_self(char ***argvp, int *argcp, char *err, size_t errlen)
{
    char *buf = NULL, **argv = NULL;
    size_t len = 0, cap = 0;
    ssize_t r;
    int fd, argc = 0, rv = -1;

    fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "xmem: /proc/self/cmdline: %s", strerror(errno));
        return -1;
    }
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *nb = realloc(buf, cap + 8192);
            if (nb == NULL)
                goto out;
            buf = nb;
            cap += 8192;
        }
        r = read(fd, buf + len, 4096);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errlen, "xmem: /proc/self/cmdline: %s", strerror(errno));
            goto out;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\0')
            argc++;
    argv = calloc((size_t)argc + 1, sizeof(*argv));
    if (argv == NULL)
        goto out;
    {
        size_t off = 0;
        for (int i = 0; i < argc; i++) {
            argv[i] = strdup(buf + off);
            if (argv[i] == NULL) {
                xmem_argv_free(argv);
                argv = NULL;
                goto out;
            }
            off += strlen(buf + off) + 1;
        }
    }
    *argvp = argv;
    *argcp = argc;
    rv = 0;
out:
    if (rv < 0 && err[0] == '\0')
        snprintf(err, errlen, "xmem: out of memory reading /proc/self/cmdline");
    free(buf);
    close(fd);
    return rv;
}
