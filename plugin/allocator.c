/*
 * allocator.c — sbatch, salloc (allocator context) and srun outside a job (local context).
 *
 * The --xmem callback finds the training entrypoint, asks xmemd for an estimate within
 * the plugstack deadline and keeps the answer. It also puts the answer in this process's
 * environment (XMEM_*), where cli_filter/lua, which runs next, reads it. init_post_opt then
 * hands the answer to the controller with spank_job_control_setenv (job_submit.lua sees it
 * in job_desc.spank_job_env) and removes the process variables so they do not reach the job.
 *
 * Never lose a job: whatever fails here, the job is submitted with its original request
 * and a one-line warning, unless the site set on_failure=reject.
 */
#define _GNU_SOURCE /* get_current_dir_name: sbatch's base for a relative --chdir */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "classify.h"
#include "../daemon/contract/outcomes.h"
#include "../daemon/contract/request_env.h"
#include "defaults.h"
#include "export.h"
#include "spank_ctx.h"
#include "xmem_client.h"

extern char **environ;

/* The answer of this submission; one per process. */
static struct {
    int done;    /* an estimate was attempted for `value` */
    int mode;    /* enum xmem_mode that produced the answer */
    int have;    /* 1 if limit/peak below are valid */
    int failed;  /* 1 if the estimate failed and on_failure=reject */
    int pending; /* 1: xmemd goes on after the budget; the job is held for it (docs/async.md) */
    uint64_t peak_bytes;
    uint64_t limit_bytes;
    uint64_t gpu_bytes;
    uint64_t request_id;
    char gpu[64];
    char decision[2048];
    char value[64]; /* normalized --xmem value the answer is for */
} ans;

/* Names of the variables, both in the process (for cli_filter) and, through
 * spank_job_control_setenv, in the job's SPANK environment (for job_submit.lua). */
static const char *const xmem_vars[] = {
    "XMEM_MODE",     "XMEM_LIMIT_MB", "XMEM_PEAK_MB", "XMEM_GPU",      "XMEM_REQUEST_ID",
    "XMEM_DECISION", "XMEM_ORIGIN",   "XMEM_PENDING", "XMEM_ENVNAMES", NULL};

/* The variables a decision binds (contract/request_env.h), ':'-joined as xmemd signs them: a
 * held job's mark keeps their digest, which the later decision must match. */
static void env_names(char *buf, size_t len)
{
    static const char *const names[] = {XMEM_REQUEST_ENV_NAMES};

    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (i > 0)
            strncat(buf, ":", len - strlen(buf) - 1);
        strncat(buf, names[i], len - strlen(buf) - 1);
    }
}

static const char *origin_name(int command)
{
    switch (command) {
    case XMEM_CMD_SBATCH:
        return "sbatch";
    case XMEM_CMD_SALLOC:
        return "salloc";
    case XMEM_CMD_SRUN:
        return "srun";
    default:
        return "other";
    }
}

/* Reads a batch script (at most XMEM_PLUGIN_MAX_SCRIPT_BYTES) into a malloc'd string. */
static char *read_script(const char *path, char *err, size_t errlen)
{
    struct stat st;
    char *text = NULL;
    ssize_t r;
    size_t len = 0;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "xmem: cannot read the batch script %s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > XMEM_PLUGIN_MAX_SCRIPT_BYTES) {
        snprintf(err, errlen, "xmem: %s is not a batch script file of at most %d bytes", path,
                 XMEM_PLUGIN_MAX_SCRIPT_BYTES);
        goto out;
    }
    text = malloc((size_t)st.st_size + 1);
    if (text == NULL)
        goto out;
    while (len < (size_t)st.st_size) {
        r = read(fd, text + len, (size_t)st.st_size - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    text[len] = '\0';
out:
    close(fd);
    return text;
}

static void join_words(char *const *argv, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; argv != NULL && argv[i] != NULL; i++) {
        if (i > 0)
            strncat(buf, " ", len - strlen(buf) - 1);
        strncat(buf, argv[i], len - strlen(buf) - 1);
    }
}

/* What this submission will profile. */
struct job_input {
    struct xmem_cmdline cl;
    char **self_argv; /* /proc/self/cmdline */
    int self_argc;
    char *script_text;        /* batch script or --wrap text */
    char **sbatch_opts;       /* "#SBATCH" words of the script */
    char **entry;             /* the entrypoint command */
    struct xmem_preamble pre; /* the script's lines before it */
    char where[512];          /* "train.sbatch line 7 (#XMEM)" */
};

static void job_input_free(struct job_input *in)
{
    xmem_argv_free(in->self_argv);
    xmem_argv_free(in->sbatch_opts);
    xmem_argv_free(in->entry);
    xmem_preamble_free(&in->pre);
    free(in->script_text);
}

/* The request's copy of preamble lines (pointers into lines); NULL when n is 0. */
static struct xmem_script_line *request_lines(struct xmem_line *lines, int n)
{
    struct xmem_script_line *out = n > 0 ? calloc((size_t)n, sizeof(*out)) : NULL;

    for (int i = 0; out != NULL && i < n; i++) {
        out[i].line = lines[i].line;
        out[i].text = lines[i].text;
    }
    return out;
}

/* Skipped lines are only shown: cut them to what xmemd accepts, and show bytes outside
 * printable ASCII as '?', so a Latin-1 comment cannot make the request invalid JSON text. */
static void displayable_lines(struct xmem_line *lines, int n)
{
    for (int i = 0; i < n; i++) {
        if (strlen(lines[i].text) > XMEM_MAX_SCRIPT_LINE_BYTES)
            lines[i].text[XMEM_MAX_SCRIPT_LINE_BYTES] = '\0';
        for (unsigned char *c = (unsigned char *)lines[i].text; *c != '\0'; c++)
            if (*c < 0x20 || *c >= 0x7f)
                *c = '?';
    }
}

/* Fills in->entry from the script, --wrap or command; on failure err says what to do. */
static int find_entrypoint(struct job_input *in, char *err, size_t errlen)
{
    struct xmem_cmdline *c = &in->cl;
    struct xmem_script_job job;
    const char *name;
    int n;

    if (c->command == XMEM_CMD_SBATCH) {
        if (c->wrap != NULL) {
            /* The bytes sbatch submits, so line numbers are the ones xmemd reads too. */
            in->script_text = xmem_wrap_script(c->wrap);
            name = "--wrap";
        } else if (c->first_operand >= 0) {
            name = in->self_argv[c->first_operand];
            in->script_text = read_script(name, err, errlen);
            if (in->script_text == NULL)
                return -1;
        } else {
            snprintf(err, errlen,
                     "xmem: the batch script comes from standard input, which xmem cannot read "
                     "ahead of sbatch; pass it as a file (sbatch --xmem job.sh), with an "
                     "'#XMEM python3 train.py ...' line if it does not run python itself");
            return -1;
        }
        if (in->script_text == NULL)
            return -1;
        in->sbatch_opts = xmem_script_sbatch_options(in->script_text, &n);
        xmem_cmdline_apply_script(c, in->sbatch_opts, n);
        if (xmem_script_job_find(in->script_text, &job) < 0) {
            snprintf(err, errlen,
                     "xmem: no training entrypoint in %s: add a line '#XMEM python3 train.py "
                     "ARGS' naming the command to profile",
                     name);
            return -1;
        }
        in->entry = job.entry;
        in->pre = job.pre;
        if (c->wrap != NULL)
            snprintf(in->where, sizeof(in->where), "the --wrap command");
        else
            snprintf(in->where, sizeof(in->where), "%s line %d%s", name, job.line,
                     job.source == XMEM_ENTRY_DIRECTIVE ? " (#XMEM)" : "");
        return 0;
    }
    if (c->first_operand < 0) {
        snprintf(err, errlen,
                 "xmem: no command to profile: give the training command, e.g. '%s --xmem "
                 "--gres=gpu:1 python3 train.py'",
                 origin_name(c->command));
        return -1;
    }
    in->entry = xmem_entrypoint_from_argv(in->self_argv + c->first_operand,
                                          in->self_argc - c->first_operand);
    if (in->entry == NULL) {
        snprintf(err, errlen, "xmem: cannot find the training command in the %s command line",
                 origin_name(c->command));
        return -1;
    }
    snprintf(in->where, sizeof(in->where), "the %s command line", origin_name(c->command));
    return 0;
}

static void export_answer(int command)
{
    char buf[512];

    setenv("XMEM_MODE", xmem_mode_name(ans.mode), 1);
    setenv("XMEM_ORIGIN", origin_name(command), 1);
    if (ans.pending) { /* no limit yet: job_submit.lua holds the job for request_id */
        snprintf(buf, sizeof(buf), "%" PRIu64, ans.request_id);
        setenv("XMEM_PENDING", buf, 1);
        env_names(buf, sizeof(buf));
        setenv("XMEM_ENVNAMES", buf, 1);
        return;
    }
    snprintf(buf, sizeof(buf), "%" PRIu64, xmem_mib_ceil(ans.limit_bytes));
    setenv("XMEM_LIMIT_MB", buf, 1);
    if (ans.peak_bytes > 0) {
        snprintf(buf, sizeof(buf), "%" PRIu64, xmem_mib_ceil(ans.peak_bytes));
        setenv("XMEM_PEAK_MB", buf, 1);
    }
    if (ans.gpu[0] != '\0')
        setenv("XMEM_GPU", ans.gpu, 1);
    if (ans.request_id > 0) {
        snprintf(buf, sizeof(buf), "%" PRIu64, ans.request_id);
        setenv("XMEM_REQUEST_ID", buf, 1);
    }
    if (ans.decision[0] != '\0')
        setenv("XMEM_DECISION", ans.decision, 1);
}

static void clear_answer(void)
{
    for (const char *const *v = xmem_vars; *v != NULL; v++)
        unsetenv(*v);
    ans.have = 0;
    ans.pending = 0;
}

/* Never lose a job: warn and keep the request, or refuse if the site asked for that. */
static int estimate_failed(const char *why)
{
    if (xmem__settings.on_failure == XMEM_ON_FAILURE_REJECT) {
        slurm_error("%s; this site refuses jobs xmem cannot size (on_failure=reject)", why);
        ans.failed = 1;
        return 0; /* refused in init_post_opt, where sbatch stops cleanly */
    }
    slurm_error("%s; the job is submitted with its original request", why);
    return 0;
}

/* The job's working directory as sbatch 22.05 sends it (job_desc.work_dir), which the signed
 * decision is bound to: getcwd() without --chdir; --chdir as given when absolute; a relative
 * one after get_current_dir_name() (the shell's $PWD when it names this directory, so maybe
 * through a symlink) and a '/', not normalised. Malloc'd; NULL when it cannot be known. */
static char *job_directory(const char *chdir_opt)
{
    char *base, *out;

    if (chdir_opt == NULL)
        return getcwd(NULL, 0);
    if (chdir_opt[0] == '/')
        return strdup(chdir_opt);
    base = get_current_dir_name();
    if (base == NULL)
        return NULL;
    out = malloc(strlen(base) + strlen(chdir_opt) + 2);
    if (out != NULL)
        sprintf(out, "%s/%s", base, chdir_opt);
    free(base);
    return out;
}

static int ask_daemon(struct job_input *in, int mode)
{
    struct xmem_estimate_request req;
    struct xmem_estimate_result res;
    char err[1024] = "", entry[1024], peak[32], limit[32], gres[96];
    char *script = NULL, **env = NULL, *dir = job_directory(in->cl.chdir);
    int rc;

    memset(&req, 0, sizeof(req));
    memset(&res, 0, sizeof(res));
    req.argv = (const char *const *)in->entry;
    /* The script sbatch sends is the one the decision is bound to (its SHA-256, read by
     * xmemd as the user): named absolutely, since cwd below may be --chdir's. For --wrap,
     * xmemd builds sbatch's script from the command itself. */
    if (in->cl.command == XMEM_CMD_SBATCH && in->cl.wrap != NULL) {
        req.wrap = in->cl.wrap;
    } else if (in->cl.command == XMEM_CMD_SBATCH && in->cl.first_operand >= 0) {
        script = realpath(in->self_argv[in->cl.first_operand], NULL);
        req.script = script ? script : in->self_argv[in->cl.first_operand];
    }
    if (xmem_request_gpu(&in->cl, gres, sizeof(gres)) == 0)
        req.gres = gres;
    req.cwd = dir ? dir : "/";
    /* What the job itself would get: sbatch's --export semantics (salloc and srun pass the
     * whole environment). */
    env = in->cl.command == XMEM_CMD_SBATCH
              ? xmem_export_env(xmem_export_spec(&in->cl, getenv("SBATCH_EXPORT")), environ)
              : NULL;
    req.env = (const char *const *)(env ? env : environ);
    req.preamble = request_lines(in->pre.kept, in->pre.nkept);
    req.preamble_count = req.preamble ? in->pre.nkept : 0;
    /* At most what xmemd accepts, rather than lose the estimate over lines only shown. */
    displayable_lines(in->pre.skipped, in->pre.nskipped);
    req.skipped = request_lines(in->pre.skipped, in->pre.nskipped);
    req.skipped_count = req.skipped ? in->pre.nskipped : 0;
    if (req.skipped_count > XMEM_MAX_PREAMBLE_LINES)
        req.skipped_count = XMEM_MAX_PREAMBLE_LINES;
    req.partition = in->cl.partition ? in->cl.partition : getenv("SBATCH_PARTITION");
    req.steps = xmem__settings.steps;
    req.check_only = mode == XMEM_MODE_CHECK;
    /* A batch job can wait in the queue for its estimate; salloc and srun wait here. */
    req.async_ok = in->cl.command == XMEM_CMD_SBATCH && mode != XMEM_MODE_CHECK;
    join_words(in->entry, entry, sizeof(entry));
    slurm_info("xmem: profiling '%s' (from %s), up to %d s", entry, in->where,
               xmem__settings.timeout_s);

    rc = xmem_client_estimate(xmem__settings.socket, xmem__settings.timeout_s * 1000, &req, &res,
                              err, sizeof(err));
    free(script);
    free(dir);
    xmem_argv_free(env);
    free((void *)req.preamble);
    free((void *)req.skipped);
    if (res.skipped[0] != '\0')
        slurm_info("xmem: not run before the profile (they do work, not set the environment): "
                   "%s",
                   res.skipped);
    if (rc == XMEM_CLIENT_EREFUSED) {
        snprintf(err, sizeof(err), "xmem: no estimate for '%.200s': %.511s", entry,
                 res.message[0] ? res.message : res.outcome_name);
        return estimate_failed(err);
    }
    if (rc != 0) {
        if (err[0] == '\0')
            snprintf(err, sizeof(err), "xmem: estimate failed (error %d)", rc);
        return estimate_failed(err);
    }
    ans.have = 1;
    if (res.outcome == XMEM_OUTCOME_pending) {
        ans.pending = 1;
        ans.request_id = res.request_id;
        slurm_info("%s",
                   res.message[0] ? res.message : "xmem: the estimate goes on; the job is held");
        return 0;
    }
    ans.peak_bytes = res.peak_bytes;
    ans.limit_bytes = res.limit_bytes;
    ans.gpu_bytes = res.gpu_memory_bytes;
    ans.request_id = res.request_id;
    snprintf(ans.gpu, sizeof(ans.gpu), "%s", res.gpu);
    snprintf(ans.decision, sizeof(ans.decision), "%s", res.decision);
    /* In whole MiB, as the packing record and the share line print them: one number per
     * quantity on the user's screen (ARCHITECTURE.md, glossary: limit, share size). */
    snprintf(peak, sizeof(peak), "%" PRIu64 " MiB", xmem_mib_ceil(res.peak_bytes));
    snprintf(limit, sizeof(limit), "%" PRIu64 " MiB", xmem_mib_ceil(res.limit_bytes));
    slurm_info("xmem: estimate for %s: peak %s, limit %s%s", res.gpu[0] ? res.gpu : "the GPU", peak,
               limit, res.cached ? " (cached)" : "");
    if (!res.fits)
        slurm_error("xmem: warning: the limit (%s) does not fit the GPU; the job keeps its "
                    "whole GPU and may run out of memory",
                    limit);
    if (res.message[0] != '\0' && xmem__settings.verbose)
        slurm_info("%s", res.message);
    if (mode == XMEM_MODE_CHECK)
        slurm_info("xmem: --xmem=check: the job is not packed; it keeps its whole GPU");
    return 0;
}

/* Normalized option value: "" for bare --xmem. */
static const char *norm(const char *v)
{
    return (v == NULL || strcmp(v, "(null)") == 0 || strcmp(v, "set") == 0) ? "" : v;
}

int xmem__allocator_init(void)
{
    clear_answer(); /* only this plugin's answer may reach cli_filter, never a stray variable */
    return 0;
}

int xmem__allocator_option(const struct xmem_value *v, const char *optarg)
{
    struct job_input in;
    char err[768] = "", why[256], size[32];
    int rc = 0, kind;

    /* Inside a job (srun steps, nested sbatch) the allocation was sized already. */
    if (getenv("SLURM_JOB_ID") != NULL)
        return 0;
    memset(&in, 0, sizeof(in));
    if (xmem_cmdline_read_self(&in.self_argv, &in.self_argc, err, sizeof(err)) < 0 ||
        xmem_cmdline_scan(in.self_argc, in.self_argv, &in.cl, err, sizeof(err)) < 0) {
        rc = estimate_failed(err);
        goto out;
    }
    /* #SBATCH lines and SLURM_SPANK_ environment come before the command line, which
     * wins: wait for the command line's own callback. */
    if (in.cl.xmem_given && strcmp(norm(in.cl.xmem), norm(optarg)) != 0)
        goto out;
    if (ans.done && strcmp(ans.value, norm(optarg)) == 0)
        goto out; /* same value twice (#SBATCH and command line): harmless */
    clear_answer();
    ans.done = 1;
    ans.failed = 0;
    ans.mode = v->mode;
    snprintf(ans.value, sizeof(ans.value), "%s", norm(optarg));
    if (v->mode == XMEM_MODE_OFF)
        goto out;
    if (find_entrypoint(&in, err, sizeof(err)) < 0) {
        /* A declared budget needs no entrypoint; it only needs the GPU request. */
        if (v->mode != XMEM_MODE_BUDGET) {
            rc = estimate_failed(err);
            goto out;
        }
    }
    kind = xmem_request_classify(&in.cl, why, sizeof(why));
    /* Several GPUs or nodes are profiled at their world size; the controller says whether
     * Slurm can hold them as shares (docs/slurm.md, "Multi-GPU jobs"). */
    if (kind != XMEM_REQ_SINGLE && kind != XMEM_REQ_MULTI && v->mode != XMEM_MODE_CHECK) {
        slurm_info("xmem: %s: the request is left unchanged", why);
        goto out;
    }
    if (v->mode == XMEM_MODE_BUDGET) {
        ans.have = 1;
        ans.limit_bytes = v->budget_bytes;
        snprintf(size, sizeof(size), "%" PRIu64 " MiB", xmem_mib_ceil(v->budget_bytes));
        slurm_info(
            "xmem: declared budget %s, the job's limit (not profiled; the node holds the job to "
            "it with the best enforcement level it offers)",
            size);
    } else {
        rc = ask_daemon(&in, v->mode);
    }
    if (ans.have)
        export_answer(in.cl.command);
out:
    job_input_free(&in);
    return rc;
}

int xmem__allocator_post_opt(spank_t sp)
{
    char buf[64];
    const char *val;

    if (ans.failed)
        return -1; /* on_failure=reject: stop before anything is submitted */
    if (!ans.have)
        return 0;
    for (const char *const *v = xmem_vars; *v != NULL; v++) {
        val = getenv(*v);
        if (val == NULL || val[0] == '\0')
            continue;
        if (spank_job_control_setenv(sp, *v, val, 1) != ESPANK_SUCCESS) {
            slurm_error("xmem: cannot pass %s to the controller; the job is submitted with its "
                        "original request",
                        *v);
            break;
        }
        /* srun's own steps do not get the job-control environment: give them the same
         * SLURM_SPANK_XMEM_* names through srun's environment, which its tasks inherit. */
        if (spank_context() == S_CTX_LOCAL) {
            snprintf(buf, sizeof(buf), "SLURM_SPANK_%s", *v);
            setenv(buf, val, 1); /* spank_setenv is remote-only in 22.05 */
        }
    }
    clear_answer(); /* the process variables were for cli_filter only */
    return 0;
}
