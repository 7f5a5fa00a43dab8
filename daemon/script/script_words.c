/*
 * script_words.c — the words and lines of a shell script, split like a shell would split
 * them (quotes, backslashes, backslash-newline), without expansion. The bottom of the
 * parser: slurm_cmdline.c, script_preamble.c and script_entrypoint.c build on it, and it
 * calls none of them.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "contract/defaults.h"
#include "xmem_script.h"

void xmem_argv_free(char **argv)
{
    if (argv == NULL)
        return;
    for (char **p = argv; *p != NULL; p++)
        free(*p);
    free(argv);
}

int xmem_argv_push(char ***argv, int *n, const char *w, size_t len)
{
    char **nv = realloc(*argv, sizeof(*nv) * (size_t)(*n + 2));

    if (nv == NULL)
        return -1;
    *argv = nv;
    nv[*n] = strndup(w, len);
    if (nv[*n] == NULL)
        return -1;
    nv[++*n] = NULL;
    return 0;
}

/* A word of a command line: at most XMEM_MAX_ARGV of them. */
int xmem_command_word_push(char ***argv, int *n, const char *w, size_t len)
{
    return *n >= XMEM_MAX_ARGV ? -1 : xmem_argv_push(argv, n, w, len);
}

char **xmem_words_split(const char *line, int *np)
{
    char **argv = NULL, *word;
    size_t cap = strlen(line) + 1, len = 0;
    int n = 0, in_word = 0;
    const char *p = line;

    word = malloc(cap);
    if (word == NULL)
        return NULL;
    for (;; p++) {
        char ch = *p;

        if (ch == '\0' || ch == '\n' || ch == ' ' || ch == '\t' || strchr(";&|<>", ch) != NULL ||
            (ch == '#' && !in_word)) {
            if (in_word && xmem_command_word_push(&argv, &n, word, len) < 0)
                goto fail;
            in_word = 0;
            len = 0;
            if (ch == ' ' || ch == '\t')
                continue;
            break; /* end of the simple command */
        }
        in_word = 1;
        if (ch == '\\' && p[1] != '\0') {
            word[len++] = *++p;
        } else if (ch == '\'') {
            const char *q = strchr(p + 1, '\'');
            if (q == NULL)
                goto fail;
            memcpy(word + len, p + 1, (size_t)(q - p - 1));
            len += (size_t)(q - p - 1);
            p = q;
        } else if (ch == '"') {
            for (p++; *p != '"'; p++) {
                if (*p == '\0')
                    goto fail;
                if (*p == '\\' && strchr("\"\\$`", p[1]) != NULL && p[1] != '\0')
                    p++;
                word[len++] = *p;
            }
        } else {
            word[len++] = ch;
        }
    }
    free(word);
    if (np)
        *np = n;
    if (n == 0) {
        free(argv);
        return NULL;
    }
    return argv;
fail:
    free(word);
    xmem_argv_free(argv);
    return NULL;
}

int xmem_word_is_assignment(const char *w)
{
    const char *eq = strchr(w, '=');

    if (eq == NULL || eq == w || !(isalpha((unsigned char)w[0]) || w[0] == '_'))
        return 0;
    for (const char *p = w; p < eq; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return 0;
    return 1;
}

int xmem_script_each_line(const char *text, int (*fn)(const char *line, int lineno, void *arg),
                          void *arg)
{
    const char *p = text;
    int lineno = 0, rc = 0;

    while (*p != '\0' && rc == 0) {
        char *line;
        size_t len = 0;
        int first = ++lineno;

        line = malloc(strlen(p) + 1);
        if (line == NULL)
            return -1;
        for (; *p != '\0'; p++) {
            if (*p == '\\' && p[1] == '\n') {
                p++;
                lineno++;
                continue;
            }
            if (*p == '\n') {
                p++;
                break;
            }
            line[len++] = *p;
        }
        line[len] = '\0';
        rc = fn(line, first, arg);
        free(line);
    }
    return rc;
}
