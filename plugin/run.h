/*
 * run.h — running a program from an argv under a deadline (run.c).
 *
 * Contract: both return 0 only when the program exited with status 0, else -1 with a
 * one-line message starting with "xmem: " in err.
 */
#ifndef XMEM_RUN_H
#define XMEM_RUN_H

#include <stddef.h>

/* Runs argv (PATH search) with stdin and stderr on /dev/null; out gets the head of its
 * stdout. Past deadline_ms the child is killed. */
int xmem_run_capture(char *const argv[], int deadline_ms, char *out, size_t outlen, char *err,
                     size_t errlen);
/* The same, with `input` (NULL: /dev/null; at most a pipe buffer) on its stdin and envp (NULL:
 * this process's) as its environment. */
int xmem_run_feed(char *const argv[], char *const envp[], const char *input, int deadline_ms,
                  char *out, size_t outlen, char *err, size_t errlen);

#endif
