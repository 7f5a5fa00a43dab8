/* xmem_client_io.h — internal: one request/reply exchange over the unix socket, bounded by a
 * deadline. Not part of the public API (xmem__ prefix). */
#ifndef XMEM_CLIENT_IO_H
#define XMEM_CLIENT_IO_H

#include <stddef.h>
#include <stdint.h>

/* Sends one frame of `type` with `body` and reads one reply frame. On success *reply is a
 * malloc'd NUL-terminated body the caller frees. Returns 0 or a negative XMEM_CLIENT_E*. */
int xmem__exchange(const char *socket_path, int deadline_ms, uint16_t type, const char *body,
                   size_t body_len, char **reply, char *err, size_t errlen);

/* snprintf into err, tolerating err == NULL. */
void xmem__seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
