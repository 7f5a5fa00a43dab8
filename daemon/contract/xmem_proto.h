/*
 * xmem_proto.h — the wire frame shared by xmemd (C++) and the C client (docs/protocol.md).
 *
 * A frame is a 16-byte header followed by a JSON body:
 *
 *   offset size field    value
 *   0      4    magic    0x584D454D ("XMEM"), big-endian
 *   4      2    version  XMEM_PROTO_VERSION, big-endian
 *   6      2    type     enum xmem_msg_type, big-endian
 *   8      4    length   body bytes, big-endian; at most the receiver's limit
 *   12     4    flags    0 (reserved; a receiver refuses non-zero so it can be used later)
 *
 * The receiver decodes and checks the header, including the size limit, before it reads
 * a single byte of the body.
 */
#ifndef XMEM_PROTO_H
#define XMEM_PROTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XMEM_PROTO_MAGIC 0x584D454Du
/* Bump on any incompatible change of the header or of a body's meaning. */
#define XMEM_PROTO_VERSION 1u
#define XMEM_FRAME_HEADER_SIZE 16u
/* Largest request body xmemd reads: argv + relevant environment fit in far less; anything
 * bigger is a broken or hostile client and is refused before its body is read. */
#define XMEM_MAX_REQUEST_BYTES (1u << 20)
/* Largest reply body a client accepts (status lists in-flight work, still small). */
#define XMEM_MAX_REPLY_BYTES (4u << 20)

enum xmem_msg_type {
    XMEM_MSG_ESTIMATE = 1,
    XMEM_MSG_STATUS = 2,
    XMEM_MSG_STATS = 3,
    XMEM_MSG_JOB_END = 4,
    XMEM_MSG_REPLY = 128, /* every answer, success or refusal; the body carries the outcome */
};

struct xmem_frame_header {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint32_t length;
    uint32_t flags;
};

enum xmem_frame_status {
    XMEM_FRAME_OK = 0,
    XMEM_FRAME_EMAGIC = -1,   /* not an xmem frame */
    XMEM_FRAME_EVERSION = -2, /* a version this side does not speak */
    XMEM_FRAME_ETYPE = -3,    /* unknown message type */
    XMEM_FRAME_ETOOBIG = -4,  /* length above the receiver's limit */
    XMEM_FRAME_EFLAGS = -5,   /* reserved flags set */
};

/* Writes the 16 header bytes for a body of `length` bytes. */
void xmem_frame_encode(uint8_t out[XMEM_FRAME_HEADER_SIZE], uint16_t type, uint32_t length);

/* Decodes and validates 16 header bytes; `max_length` is the receiver's body limit. */
int xmem_frame_decode(const uint8_t in[XMEM_FRAME_HEADER_SIZE], uint32_t max_length,
                      struct xmem_frame_header *hdr);

/* One line describing a decode status, e.g. "bad magic (not an xmem frame)". */
const char *xmem_frame_strerror(int status);

/* Is `type` a message this protocol version defines? */
int xmem_frame_type_known(uint16_t type);

#ifdef __cplusplus
}
#endif
#endif
