/*
 * oom.h — a CUDA out-of-memory in the job's output (oom.c).
 *
 * Contract: xmem_oom_text is a bool predicate; xmem_oom_scan_file returns 0 or -1 (with a
 * one-line message starting with "xmem: " in err) and says what it found in *found.
 */
#ifndef XMEM_OOM_H
#define XMEM_OOM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* True when buf holds one of PyTorch's CUDA out-of-memory messages. */
bool xmem_oom_text(const char *buf, size_t len);
/* Scans the last XMEM_PLUGIN_OOM_SCAN_BYTES of path, only if it is a regular file owned by
 * owner (never following a final symlink); /dev/null is 0 with *found = 0. */
int xmem_oom_scan_file(const char *path, uid_t owner, int *found, char *err, size_t errlen);

#endif
