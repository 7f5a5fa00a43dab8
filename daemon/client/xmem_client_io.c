/*
 * xmem_client_io.c — connect, send one frame, receive one frame, all inside one deadline.
 *
 * The socket is non-blocking; every wait is a poll() bounded by the time left, so no call
 * blocks past the caller's deadline whatever the daemon does.
 */
#define _GNU_SOURCE
#include "xmem_client_io.h"
#include "xmem_client.h"
#include "contract/xmem_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

void xmem__seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for `events` or the deadline passes: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, (int)left);
        if (n > 0)
            return 1;
        if (n == 0)
            return 0;
        if (errno != EINTR)
            return -1;
    }
}

static int connect_socket(const char *path, int64_t deadline, int *out, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path)) {
        xmem__seterr(err, errlen, "xmem: socket path too long (max %zu bytes): %s",
                     sizeof(sa.sun_path) - 1, path);
        return XMEM_CLIENT_EINVAL;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        xmem__seterr(err, errlen, "xmem: cannot create a socket: %s", strerror(errno));
        return XMEM_CLIENT_EUNREACH;
    }
    /* A unix connect completes at once or fails with EAGAIN when the backlog is full;
     * retry until the deadline rather than reporting a busy daemon as unreachable. */
    while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN && now_ms() < deadline) {
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        int e = errno;
        close(fd);
        if (e == EAGAIN) {
            xmem__seterr(err, errlen,
                         "xmem: xmemd at %s accepts no connection before the deadline "
                         "(overloaded? retry later)",
                         path);
            return XMEM_CLIENT_ETIMEDOUT;
        }
        xmem__seterr(err, errlen, "xmem: cannot reach xmemd at %s: %s (is xmemd running?)", path,
                     strerror(e));
        return XMEM_CLIENT_EUNREACH;
    }
    *out = fd;
    return 0;
}

static int send_all(int fd, const uint8_t *buf, size_t len, int64_t deadline)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            int w = wait_fd(fd, POLLOUT, deadline);
            if (w == 1)
                continue;
            return w == 0 ? XMEM_CLIENT_ETIMEDOUT : XMEM_CLIENT_EUNREACH;
        }
        return XMEM_CLIENT_EUNREACH;
    }
    return 0;
}

/* Reads exactly len bytes; EPROTO when the daemon closes early. */
static int recv_all(int fd, uint8_t *buf, size_t len, int64_t deadline)
{
    while (len > 0) {
        ssize_t n = recv(fd, buf, len, 0);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0)
            return XMEM_CLIENT_EPROTO;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN) {
            int w = wait_fd(fd, POLLIN, deadline);
            if (w == 1)
                continue;
            return w == 0 ? XMEM_CLIENT_ETIMEDOUT : XMEM_CLIENT_EUNREACH;
        }
        return XMEM_CLIENT_EUNREACH;
    }
    return 0;
}

static void io_error(int rc, const char *path, int deadline_ms, const char *what, char *err,
                     size_t errlen)
{
    if (rc == XMEM_CLIENT_ETIMEDOUT)
        xmem__seterr(err, errlen,
                     "xmem: xmemd at %s did not answer within %d ms (overloaded or profiling "
                     "a slow entrypoint? raise the deadline)",
                     path, deadline_ms);
    else if (rc == XMEM_CLIENT_EPROTO)
        xmem__seterr(err, errlen,
                     "xmem: xmemd at %s closed the connection while %s "
                     "(see the xmemd log)",
                     path, what);
    else
        xmem__seterr(err, errlen, "xmem: lost the connection to xmemd at %s while %s: %s", path,
                     what, strerror(errno));
}

int xmem__exchange(const char *socket_path, int deadline_ms, uint16_t type, const char *body,
                   size_t body_len, char **reply, char *err, size_t errlen)
{
    int rc, fd = -1;
    uint8_t hdr[XMEM_FRAME_HEADER_SIZE];
    struct xmem_frame_header h;
    char *buf = NULL;
    int64_t deadline = now_ms() + (deadline_ms > 0 ? deadline_ms : 0);

    *reply = NULL;
    if (body_len > XMEM_MAX_REQUEST_BYTES) {
        xmem__seterr(err, errlen,
                     "xmem: request of %zu bytes exceeds the protocol limit of "
                     "%u bytes (shorten argv or the environment)",
                     body_len, XMEM_MAX_REQUEST_BYTES);
        return XMEM_CLIENT_EINVAL;
    }
    rc = connect_socket(socket_path, deadline, &fd, err, errlen);
    if (rc < 0)
        goto out;
    xmem_frame_encode(hdr, type, (uint32_t)body_len);
    if ((rc = send_all(fd, hdr, sizeof(hdr), deadline)) < 0 ||
        (rc = send_all(fd, (const uint8_t *)body, body_len, deadline)) < 0) {
        io_error(rc, socket_path, deadline_ms, "sending the request", err, errlen);
        goto out;
    }
    if ((rc = recv_all(fd, hdr, sizeof(hdr), deadline)) < 0) {
        io_error(rc, socket_path, deadline_ms, "waiting for the reply", err, errlen);
        goto out;
    }
    int st = xmem_frame_decode(hdr, XMEM_MAX_REPLY_BYTES, &h);
    if (st != XMEM_FRAME_OK || h.type != XMEM_MSG_REPLY) {
        xmem__seterr(err, errlen, "xmem: bad reply from xmemd at %s: %s", socket_path,
                     st != XMEM_FRAME_OK ? xmem_frame_strerror(st) : "not a reply frame");
        rc = XMEM_CLIENT_EPROTO;
        goto out;
    }
    buf = malloc((size_t)h.length + 1);
    if (!buf) {
        xmem__seterr(err, errlen, "xmem: out of memory for a %u-byte reply", h.length);
        rc = XMEM_CLIENT_EPROTO;
        goto out;
    }
    if ((rc = recv_all(fd, (uint8_t *)buf, h.length, deadline)) < 0) {
        io_error(rc, socket_path, deadline_ms, "reading the reply", err, errlen);
        goto out;
    }
    buf[h.length] = '\0';
    *reply = buf;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    if (fd >= 0)
        close(fd);
    return rc;
}
