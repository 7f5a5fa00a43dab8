/*
 * script_preamble.c — which lines before a batch script's entrypoint set up the job's environment
 * (module load, source .../activate, conda activate, export, cd, set -e, assignments), so
 * xmemd runs them before the profile, and which do work (srun, python prepare.py, cp,
 * anything else), so they are not run and the user is told. The one place that decides.
 *
 * A line is kept only when every simple command on it (split at ; && ||) is one of the
 * environment commands below, and it has no pipe, no background &, no input redirection,
 * no output redirection other than to /dev/null or a descriptor, no command substitution
 * other than of one simple command that only reads ($(pwd), $(dirname "$0"): no ; & | < >
 * or nested substitution inside) or a conda shell hook, no eval other than of that hook
 * (eval "$(conda shell.bash hook)"), no parameter transformation (${A@P} expands a prompt,
 * which runs its substitutions) and no alias (with expand_aliases an alias turns an
 * environment command into work). When in doubt, a line is skipped: a skipped
 * line costs at most a profile that fails and says which line it needed; a kept line that
 * does work would run it on the login node.
 */
#include <stdlib.h>
#include <string.h>

#include "xmem_script.h"

/* Commands that only change the shell's own state. */
static const char *const env_commands[] = {
    "module", "ml",    "source", ".",       "export",  "unset",    "cd",   "pushd", "popd",
    "set",    "shopt", "umask",  "declare", "typeset", "readonly", "true", ":",     NULL,
};

/* Commands a line may substitute: they read, and change nothing. */
static const char *const pure_substitutions[] = {
    "pwd", "dirname", "basename", "realpath", "readlink", "whoami", "id", NULL,
};

/* Words that open (+1) or close (-1) a multi-line shell block. */
static const struct {
    const char *word;
    int delta;
} block_words[] = {
    {"if", 1},   {"case", 1}, {"for", 1},   {"while", 1}, {"until", 1}, {"select", 1},
    {"{", 1},    {"fi", -1},  {"esac", -1}, {"done", -1}, {"}", -1},    {"function", 0},
    {"then", 0}, {"else", 0}, {"elif", 0},  {"do", 0},
};

#define MAX_SEGMENTS 32

struct segment {
    const char *start;
    size_t len;
};

static const char *base_name(const char *s)
{
    const char *b = strrchr(s, '/');
    return b ? b + 1 : s;
}

static int in_list(const char *w, const char *const *list)
{
    for (; *list != NULL; list++)
        if (strcmp(w, *list) == 0)
            return 1;
    return 0;
}

static int is_conda(const char *w)
{
    const char *b = base_name(w);
    return strcmp(b, "conda") == 0 || strcmp(b, "mamba") == 0 || strcmp(b, "micromamba") == 0;
}

/* conda/mamba activate|deactivate; spack load|unload, spack env activate|deactivate. */
static int activates(char *const *w, int n)
{
    if (n >= 2 && is_conda(w[0]))
        return strcmp(w[1], "activate") == 0 || strcmp(w[1], "deactivate") == 0;
    if (n >= 2 && strcmp(base_name(w[0]), "spack") == 0)
        return strcmp(w[1], "load") == 0 || strcmp(w[1], "unload") == 0 ||
               (n >= 3 && strcmp(w[1], "env") == 0 &&
                (strcmp(w[2], "activate") == 0 || strcmp(w[2], "deactivate") == 0));
    return 0;
}

/* Whether the substitution text s[0..len) is one simple command: no list, pipe, redirection,
 * subshell or nested substitution ($(pwd; cmd) once passed as "pwd"). */
static int one_simple_command(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (strchr(";&|<>()`\n", s[i]) != NULL)
            return 0;
        if (s[i] == '$' && i + 1 < len && s[i + 1] == '(')
            return 0;
    }
    return 1;
}

/* Whether w is the conda or mamba shell hook's substitution, as eval is given it. */
static int conda_hook(const char *w)
{
    char **inner;
    int n, ok;
    size_t len = strlen(w);

    if (strncmp(w, "$(", 2) == 0 && len > 3 && w[len - 1] == ')')
        w += 2, len -= 3;
    else if (w[0] == '`' && len > 2 && w[len - 1] == '`')
        w += 1, len -= 2;
    else
        return 0;
    char *text = strndup(w, len);
    if (text == NULL)
        return 0;
    inner = one_simple_command(text, len) ? xmem_words_split(text, &n) : NULL;
    free(text);
    if (inner == NULL)
        return 0;
    ok = n >= 2 && is_conda(inner[0]) && strncmp(inner[1], "shell", 5) == 0;
    xmem_argv_free(inner);
    return ok;
}

/* Whether a ${...} expansion starting at s (after "${") transforms its value (${A@P}): the
 * prompt and escape transformations run what they expand. */
static int transforms(const char *s)
{
    const char *close = strchr(s, '}');
    return close == NULL || memchr(s, '@', (size_t)(close - s)) != NULL;
}

/* The command inside a substitution starting at s (after "$(" or "`"), up to its end. */
static int substitution_pure(const char *s, char end)
{
    const char *close = strchr(s, end);
    char *inner;
    char **w;
    int n, ok;

    if (close == NULL || !one_simple_command(s, (size_t)(close - s)))
        return 0;
    inner = strndup(s, (size_t)(close - s));
    if (inner == NULL)
        return 0;
    w = xmem_words_split(inner, &n);
    free(inner);
    if (w == NULL)
        return 0;
    ok = in_list(base_name(w[0]), pure_substitutions) ||
         (n >= 2 && is_conda(w[0]) && strncmp(w[1], "shell", 5) == 0);
    xmem_argv_free(w);
    return ok;
}

/* An output redirection at p (">", ">>", "2>", "&>"): to /dev/null or a descriptor only. */
static int redirect_harmless(const char *p)
{
    while (*p == '>' || *p == '&' || *p == '|')
        p++;
    while (*p == ' ' || *p == '\t')
        p++;
    return strncmp(p, "/dev/null", 9) == 0 || (*p >= '0' && *p <= '9') || *p == '-';
}

/*
 * Splits a line into simple commands at unquoted ; & | && || (up to max), so that a block
 * word is seen on any line. Returns 0, or 1 when the line has a construct that does work or
 * cannot be judged: a pipe, a background &, an input redirection or here-document, an output
 * redirection to a file, an impure substitution, a subshell or array parenthesis, an unclosed
 * quote, too many commands.
 */
static int split_line(const char *line, struct segment *seg, int max, int *nseg)
{
    const char *p = line, *start = line;
    char quote = 0;
    int depth = 0, work = 0; /* depth: inside $( ) */

    *nseg = 0;
    for (; *p != '\0'; p++) {
        if (quote == '\'') {
            quote = *p == '\'' ? 0 : quote;
            continue;
        }
        if (*p == '\\' && p[1] != '\0') {
            p++;
            continue;
        }
        if (*p == '$' && p[1] == '{' && transforms(p + 2))
            return 1;
        if (*p == '$' && p[1] == '(' && p[2] != '(') {
            work |= !substitution_pure(p + 2, ')');
            depth++;
            p++;
            continue;
        }
        if (*p == '`') {
            const char *close = strchr(p + 1, '`');
            if (close == NULL || !substitution_pure(p + 1, '`'))
                return 1;
            p = close;
            continue;
        }
        if (depth > 0) { /* inside $( ), quoted or not: only its end matters here */
            depth -= *p == ')';
            continue;
        }
        if (quote == '"') {
            quote = *p == '"' ? 0 : quote;
            continue;
        }
        if (*p == '\'' || *p == '"') {
            quote = *p;
        } else if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
            break; /* a comment ends the line */
        } else if (*p == '<' || *p == '(' || *p == ')') {
            work = 1; /* input, here-documents, subshells, arrays: not a simple command */
        } else if (*p == '>' || (*p == '&' && p[1] == '>')) {
            work |= !redirect_harmless(p);
            while (p[1] == '>' || p[1] == '&')
                p++;
        } else if (*p == ';' || *p == '&' || *p == '|') {
            int twice = p[1] == *p;
            work |= *p != ';' && !twice; /* a pipe or a background job */
            if (*nseg >= max)
                return 1;
            seg[(*nseg)++] = (struct segment){start, (size_t)(p - start)};
            p += twice;
            start = p + 1;
        }
    }
    if (quote != 0 || depth != 0 || *nseg >= max)
        return 1;
    seg[(*nseg)++] = (struct segment){start, (size_t)(p - start)};
    return work;
}

/* The words of one simple command; *n = 0 for a blank one. NULL only when it cannot split. */
static char **segment_words(const struct segment *s, int *n)
{
    char *text = strndup(s->start, s->len);
    char **w;

    *n = 0;
    if (text == NULL)
        return NULL;
    w = xmem_words_split(text, n);
    if (w == NULL && strspn(text, " \t") == strlen(text))
        w = calloc(1, sizeof(*w)); /* blank: "a;" ends with one */
    free(text);
    return w;
}

static int command_sets_env(char *const *w, int n)
{
    int i = 0;

    while (i < n && xmem_word_is_assignment(w[i]))
        i++;
    while (i < n && (strcmp(w[i], "command") == 0 || strcmp(w[i], "builtin") == 0))
        i++;
    if (i == n)
        return 1; /* assignments only */
    if (in_list(w[i], env_commands) || activates(w + i, n - i))
        return 1;
    /* eval "$(conda shell.bash hook)", and no other eval: eval "$(pwd)" runs the path. */
    if (strcmp(w[i], "eval") == 0 && i + 1 < n) {
        for (int k = i + 1; k < n; k++)
            if (!conda_hook(w[k]))
                return 0;
        return 1;
    }
    return 0;
}

/* The block depth change of a line, and whether it has a block word at all. */
static int block_change(const struct segment *seg, int nseg, int *has_block_word)
{
    int delta = 0;

    *has_block_word = 0;
    for (int s = 0; s < nseg; s++) {
        int n;
        char **w = segment_words(&seg[s], &n);

        for (int i = 0; w != NULL && i < n; i++) {
            size_t len = strlen(w[i]);
            for (size_t b = 0; b < sizeof(block_words) / sizeof(block_words[0]); b++) {
                if ((i == 0 || strcmp(w[i], "{") == 0 || strcmp(w[i], "}") == 0) &&
                    strcmp(w[i], block_words[b].word) == 0) {
                    delta += block_words[b].delta;
                    *has_block_word = 1;
                }
            }
            if (i == 0 && len > 2 && strcmp(w[i] + len - 2, "()") == 0)
                *has_block_word = 1; /* a function definition */
        }
        xmem_argv_free(w);
    }
    return delta;
}

int xmem_preamble_line_sets_env(const char *line)
{
    struct segment seg[MAX_SEGMENTS];
    int nseg, block;

    if (split_line(line, seg, MAX_SEGMENTS, &nseg) != 0)
        return 0;
    block_change(seg, nseg, &block);
    if (block)
        return 0;
    for (int s = 0; s < nseg; s++) {
        int n, ok;
        char **w = segment_words(&seg[s], &n);

        if (w == NULL)
            return 0;
        ok = n == 0 || command_sets_env(w, n);
        xmem_argv_free(w);
        if (!ok)
            return 0;
    }
    return 1;
}

struct classify_state {
    int end_line;
    int depth; /* open multi-line blocks */
    struct xmem_preamble *p;
};

static int push_line(struct xmem_line **list, int *n, int lineno, const char *text)
{
    size_t len = strlen(text);
    struct xmem_line *nl;

    while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t' || text[len - 1] == '\r'))
        len--;
    nl = realloc(*list, sizeof(*nl) * (size_t)(*n + 1));
    if (nl == NULL)
        return -1;
    *list = nl;
    nl[*n].line = lineno;
    nl[*n].text = strndup(text, len);
    if (nl[*n].text == NULL)
        return -1;
    (*n)++;
    return 0;
}

/* The end of the leading NAME=value words of a line (quotes kept as written), or line. */
static const char *assignments_end(const char *line)
{
    const char *p = line, *end = line;

    for (;;) {
        const char *w = p;
        char quote = 0, *word;
        int assignment;

        while (*p != '\0' && (quote || (*p != ' ' && *p != '\t'))) {
            if (*p == '\\' && !quote && p[1] != '\0')
                p++;
            else if (*p == quote)
                quote = 0;
            else if (!quote && (*p == '\'' || *p == '"'))
                quote = *p;
            p++;
        }
        word = strndup(w, (size_t)(p - w));
        assignment = word != NULL && p > w && xmem_word_is_assignment(word);
        free(word);
        if (!assignment)
            return end;
        end = p;
        while (*p == ' ' || *p == '\t')
            p++;
    }
}

/* "OMP_NUM_THREADS=4 python train.py" sets the variable for the training command: kept as
 * "export OMP_NUM_THREADS=4" at the entrypoint's line, so the profile sees it too. */
static int entry_assignments(struct xmem_preamble *p, const char *line, int lineno)
{
    const char *end;
    char *text;
    int rc = 0;

    while (*line == ' ' || *line == '\t')
        line++;
    end = assignments_end(line);
    if (end == line)
        return 0;
    text = malloc((size_t)(end - line) + sizeof("export "));
    if (text == NULL)
        return -1;
    memcpy(text, "export ", 7);
    memcpy(text + 7, line, (size_t)(end - line));
    text[7 + (end - line)] = '\0';
    if (xmem_preamble_line_sets_env(text))
        rc = push_line(&p->kept, &p->nkept, lineno, text);
    free(text);
    return rc;
}

static int classify_line(const char *line, int lineno, void *arg)
{
    struct classify_state *st = arg;
    struct segment seg[MAX_SEGMENTS];
    int nseg, block = 0, in_block, kept;

    if (lineno >= st->end_line) {
        if (lineno == st->end_line && st->depth == 0 && entry_assignments(st->p, line, lineno) < 0)
            return -1;
        return 1;
    }
    while (*line == ' ' || *line == '\t')
        line++;
    if (*line == '\0' || *line == '#' || *line == '\r')
        return 0; /* blank, comment, #!, #SBATCH */
    in_block = st->depth > 0;
    split_line(line, seg, MAX_SEGMENTS, &nseg); /* segments even when the line does work */
    st->depth += block_change(seg, nseg, &block);
    if (st->depth < 0)
        st->depth = 0;
    in_block |= block || st->depth > 0;
    kept = !in_block && xmem_preamble_line_sets_env(line);
    if (kept)
        return push_line(&st->p->kept, &st->p->nkept, lineno, line);
    return push_line(&st->p->skipped, &st->p->nskipped, lineno, line);
}

int xmem_preamble_classify(const char *text, int end_line, struct xmem_preamble *p)
{
    struct classify_state st = {end_line, 0, p};

    memset(p, 0, sizeof(*p));
    if (xmem_script_each_line(text, classify_line, &st) < 0) {
        xmem_preamble_free(p);
        return -1;
    }
    return 0;
}

static void free_lines(struct xmem_line *l, int n)
{
    for (int i = 0; i < n; i++)
        free(l[i].text);
    free(l);
}

void xmem_preamble_free(struct xmem_preamble *p)
{
    free_lines(p->kept, p->nkept);
    free_lines(p->skipped, p->nskipped);
    memset(p, 0, sizeof(*p));
}
