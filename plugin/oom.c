/*
 * oom.c — did the job die of a CUDA out-of-memory error? Scans the tail of the job's output
 * files for the messages PyTorch prints.
 *
 * slurmstepd runs this as root, so a file is read only when it is a regular file owned by
 * the job's user, opened without following a final symlink and without blocking (a FIFO or
 * a device is never read): a user cannot make root read somebody else's file through it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "defaults.h"
#include "oom.h"

/* PyTorch's wording: the caching allocator's "CUDA out of memory. Tried to allocate ...",
 * a raw CUDA call's "CUDA error: out of memory", and the exception class name
 * (torch.OutOfMemoryError, torch.cuda.OutOfMemoryError) that heads the traceback. */
static const char *const oom_messages[] = {"CUDA out of memory", "CUDA error: out of memory",
                                           "OutOfMemoryError", NULL};

bool xmem_oom_text(const char *buf, size_t len)
{
    for (const char *const *m = oom_messages; *m != NULL; m++)
        if (memmem(buf, len, *m, strlen(*m)) != NULL)
            return 1;
    return 0;
}

/* Reads at most XMEM_PLUGIN_OOM_SCAN_BYTES from the end of fd into buf. */
static ssize_t read_tail(int fd, off_t size, char *buf)
{
    off_t start = size > XMEM_PLUGIN_OOM_SCAN_BYTES ? size - XMEM_PLUGIN_OOM_SCAN_BYTES : 0;
    size_t got = 0;

    while (got < XMEM_PLUGIN_OOM_SCAN_BYTES) {
        ssize_t n = pread(fd, buf + got, XMEM_PLUGIN_OOM_SCAN_BYTES - got, start + (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* The file at path is a regular file of owner's, checked before opening (so a device or FIFO
 * is never opened) and again on the open descriptor (so a swap in between is caught). */
static int open_owned(const char *path, uid_t owner, struct stat *sb, char *err, size_t errlen)
{
    struct stat before;
    int fd;

    if (lstat(path, &before) < 0 || !S_ISREG(before.st_mode) || before.st_uid != owner) {
        snprintf(err, errlen, "xmem: job output %s is not a regular file of uid %u; not scanned",
                 path, (unsigned)owner);
        return -1;
    }
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "xmem: cannot open job output %s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, sb) < 0 || !S_ISREG(sb->st_mode) || sb->st_uid != owner ||
        sb->st_ino != before.st_ino || sb->st_dev != before.st_dev) {
        snprintf(err, errlen, "xmem: job output %s changed while opened; not scanned", path);
        close(fd);
        return -1;
    }
    return fd;
}

int xmem_oom_scan_file(const char *path, uid_t owner, int *found, char *err, size_t errlen)
{
    int rv = -1, fd = -1;
    struct stat sb;
    char *buf = NULL;
    ssize_t n;

    *found = 0;
    if (path == NULL || path[0] != '/') {
        snprintf(err, errlen, "xmem: job output path '%s' is not absolute; not scanned",
                 path ? path : "");
        goto out;
    }
    if (strcmp(path, "/dev/null") == 0) { /* nothing was kept: nothing to scan */
        rv = 0;
        goto out;
    }
    fd = open_owned(path, owner, &sb, err, errlen);
    if (fd < 0)
        goto out;
    buf = malloc(XMEM_PLUGIN_OOM_SCAN_BYTES);
    if (buf == NULL) {
        snprintf(err, errlen, "xmem: out of memory scanning %s", path);
        goto out;
    }
    n = read_tail(fd, sb.st_size, buf);
    if (n < 0) {
        snprintf(err, errlen, "xmem: cannot read job output %s: %s", path, strerror(errno));
        goto out;
    }
    *found = xmem_oom_text(buf, (size_t)n);
    rv = 0;
out:
    if (fd >= 0)
        close(fd);
    free(buf);
    return rv;
}
