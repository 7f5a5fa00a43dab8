/*
 * script_entrypoint.c — finds the command that trains: an explicit '#XMEM python3 train.py' line
 * in the batch script wins; else the first line that runs python or torchrun, directly or
 * behind srun, exec, env or VAR=value assignments. Words and lines come from
 * script_words.c; the submitting command line (an #XMEM line's options) from
 * slurm_cmdline.c, and the lines before the entrypoint are classified by script_preamble.c.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "xmem_script.h"

static const char *base_name(const char *s)
{
    const char *b = strrchr(s, '/');
    return b ? b + 1 : s;
}

/* python, python3, python3.11, torchrun — the programs that start a training run. */
static int is_trainer(const char *word)
{
    const char *b = base_name(word);

    if (strcmp(b, "torchrun") == 0)
        return 1;
    if (strncmp(b, "python", 6) != 0)
        return 0;
    for (b += 6; *b != '\0'; b++)
        if (!isdigit((unsigned char)*b) && *b != '.')
            return 0;
    return 1;
}

/* Index of the first word of the real command after wrappers, or -1. */
static int skip_wrappers(char *const *argv, int n)
{
    int i = 0;

    while (i < n) {
        const char *b = base_name(argv[i]);

        if (xmem_word_is_assignment(argv[i]) || strcmp(b, "exec") == 0 || strcmp(b, "time") == 0) {
            i++;
        } else if (strcmp(b, "env") == 0) {
            for (i++; i < n && (xmem_word_is_assignment(argv[i]) || argv[i][0] == '-'); i++) {
                /* env -u NAME, -C DIR, -S STRING take a separate value */
                if (strcmp(argv[i], "-u") == 0 || strcmp(argv[i], "-C") == 0 ||
                    strcmp(argv[i], "-S") == 0 || strcmp(argv[i], "--unset") == 0 ||
                    strcmp(argv[i], "--chdir") == 0)
                    i++;
            }
        } else if (strcmp(b, "srun") == 0) {
            struct xmem_cmdline c;
            char err[128];
            char **sub = calloc((size_t)(n - i) + 1, sizeof(*sub));
            int rc;

            if (sub == NULL)
                return -1;
            for (int k = i; k < n; k++)
                sub[k - i] = argv[k];
            rc = xmem_cmdline_scan(n - i, sub, &c, err, sizeof(err));
            free(sub);
            if (rc < 0 || c.first_operand < 0)
                return -1;
            i += c.first_operand;
        } else {
            return i;
        }
    }
    return -1;
}

static char **copy_from(char *const *argv, int from, int n)
{
    char **out = NULL;
    int k = 0;

    for (int i = from; i < n; i++) {
        if (xmem_command_word_push(&out, &k, argv[i], strlen(argv[i])) < 0) {
            xmem_argv_free(out);
            return NULL;
        }
    }
    return out;
}

char **xmem_entrypoint_from_argv(char *const *argv, int n)
{
    int i = skip_wrappers(argv, n);

    return i < 0 ? NULL : copy_from(argv, i, n);
}

struct find_state {
    char **argv;
    int line;
    int source;
    int scanned_line;
    char **scanned;
};

static int find_line(const char *line, int lineno, void *arg)
{
    struct find_state *st = arg;
    const char *p = line;
    char **words;
    int n, i;

    while (*p == ' ' || *p == '\t')
        p++;
    if (strncmp(p, "#XMEM", 5) == 0 && (p[5] == ' ' || p[5] == '\t')) {
        words = xmem_words_split(p + 6, &n);
        if (words == NULL)
            return 0;
        st->argv = words;
        st->line = lineno;
        st->source = XMEM_ENTRY_DIRECTIVE;
        return 1; /* a directive wins over everything */
    }
    if (st->scanned != NULL || *p == '#')
        return 0;
    words = xmem_words_split(p, &n);
    if (words == NULL)
        return 0;
    i = skip_wrappers(words, n);
    if (i >= 0 && is_trainer(words[i])) {
        st->scanned = copy_from(words, i, n);
        st->scanned_line = lineno;
    }
    xmem_argv_free(words);
    return 0;
}

int xmem_entrypoint_find(const char *text, char ***argv, int *line, int *source)
{
    struct find_state st = {0};

    *argv = NULL;
    *line = 0;
    *source = XMEM_ENTRY_NONE;
    if (xmem_script_each_line(text, find_line, &st) < 0)
        return -1;
    if (st.argv != NULL) {
        xmem_argv_free(st.scanned);
        *argv = st.argv;
        *line = st.line;
        *source = st.source;
        return 0;
    }
    if (st.scanned != NULL) {
        *argv = st.scanned;
        *line = st.scanned_line;
        *source = XMEM_ENTRY_SCANNED;
        return 0;
    }
    return -1;
}

struct training_state {
    char *const *argv; /* the command to find, or NULL for any python/torchrun */
    int line;
};

static int same_words(char *const *a, char *const *b)
{
    for (; *a != NULL && *b != NULL; a++, b++)
        if (strcmp(*a, *b) != 0)
            return 0;
    return *a == NULL && *b == NULL;
}

static int training_line(const char *line, int lineno, void *arg)
{
    struct training_state *st = arg;
    char **words;
    int n, i, found;

    while (*line == ' ' || *line == '\t')
        line++;
    if (*line == '#')
        return 0;
    words = xmem_words_split(line, &n);
    if (words == NULL)
        return 0;
    i = skip_wrappers(words, n);
    found = i >= 0 && (st->argv ? same_words(words + i, st->argv) : is_trainer(words[i]));
    xmem_argv_free(words);
    if (found)
        st->line = lineno;
    return found;
}

int xmem_entrypoint_training_line(const char *text, char *const *argv)
{
    struct training_state st = {argv, 0};

    return xmem_script_each_line(text, training_line, &st) < 0 ? 0 : st.line;
}

struct sbatch_state {
    char **argv;
    int n;
    int failed;
};

static int sbatch_line(const char *line, int lineno, void *arg)
{
    struct sbatch_state *st = arg;
    char **words;
    int n;

    (void)lineno;
    if (lineno == 1 && strncmp(line, "#!", 2) == 0)
        return 0;
    /* sbatch stops reading #SBATCH lines at the first command. */
    if (line[0] != '#') {
        const char *q = line;
        while (*q == ' ' || *q == '\t')
            q++;
        return *q == '\0' ? 0 : 1;
    }
    if (strncmp(line, "#SBATCH", 7) != 0 || (line[7] != ' ' && line[7] != '\t'))
        return 0;
    words = xmem_words_split(line + 8, &n);
    for (int i = 0; i < n; i++) {
        if (xmem_command_word_push(&st->argv, &st->n, words[i], strlen(words[i])) < 0) {
            st->failed = 1;
            break;
        }
    }
    xmem_argv_free(words);
    return st->failed;
}

char **xmem_script_sbatch_options(const char *text, int *n)
{
    struct sbatch_state st = {0};

    xmem_script_each_line(text, sbatch_line, &st);
    if (st.failed) {
        xmem_argv_free(st.argv);
        st.argv = NULL;
        st.n = 0;
    }
    *n = st.n;
    return st.argv;
}

/* The line where the job starts training, which ends the preamble (xmem_script_job_find). */
static int preamble_end(const char *text, const struct xmem_script_job *job)
{
    int runs, training;

    if (job->source != XMEM_ENTRY_DIRECTIVE)
        return job->line;
    runs = xmem_entrypoint_training_line(text, job->entry);
    training = xmem_entrypoint_training_line(text, NULL);
    return runs > 0 ? runs : training > job->line ? training : job->line;
}

int xmem_script_job_find(const char *text, struct xmem_script_job *job)
{
    memset(job, 0, sizeof(*job));
    if (xmem_entrypoint_find(text, &job->entry, &job->line, &job->source) < 0)
        return -1;
    if (xmem_preamble_classify(text, preamble_end(text, job), &job->pre) < 0) {
        xmem_script_job_free(job);
        return -1;
    }
    return 0;
}

void xmem_script_job_free(struct xmem_script_job *job)
{
    xmem_argv_free(job->entry);
    xmem_preamble_free(&job->pre);
    memset(job, 0, sizeof(*job));
}

/* sbatch 22.05's header for --wrap (src/sbatch/opt.c, _script_wrap). */
static const char wrap_header[] = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n";

char *xmem_wrap_script(const char *command)
{
    size_t hlen = sizeof(wrap_header) - 1, clen = strlen(command);
    char *s = malloc(hlen + clen + 2);

    if (s == NULL)
        return NULL;
    memcpy(s, wrap_header, hlen);
    memcpy(s + hlen, command, clen);
    s[hlen + clen] = '\n';
    s[hlen + clen + 1] = '\0';
    return s;
}
