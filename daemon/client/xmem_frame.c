/* xmem_frame.c — encode and validate the 16-byte frame header (see contract/xmem_proto.h). */
#include "contract/xmem_proto.h"

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

void xmem_frame_encode(uint8_t out[XMEM_FRAME_HEADER_SIZE], uint16_t type, uint32_t length)
{
    put32(out, XMEM_PROTO_MAGIC);
    put16(out + 4, XMEM_PROTO_VERSION);
    put16(out + 6, type);
    put32(out + 8, length);
    put32(out + 12, 0);
}

int xmem_frame_type_known(uint16_t type)
{
    switch (type) {
    case XMEM_MSG_ESTIMATE:
    case XMEM_MSG_STATUS:
    case XMEM_MSG_STATS:
    case XMEM_MSG_JOB_END:
    case XMEM_MSG_REPLY:
        return 1;
    default:
        return 0;
    }
}

int xmem_frame_decode(const uint8_t in[XMEM_FRAME_HEADER_SIZE], uint32_t max_length,
                      struct xmem_frame_header *hdr)
{
    hdr->magic = get32(in);
    hdr->version = get16(in + 4);
    hdr->type = get16(in + 6);
    hdr->length = get32(in + 8);
    hdr->flags = get32(in + 12);
    if (hdr->magic != XMEM_PROTO_MAGIC)
        return XMEM_FRAME_EMAGIC;
    if (hdr->version != XMEM_PROTO_VERSION)
        return XMEM_FRAME_EVERSION;
    if (!xmem_frame_type_known(hdr->type))
        return XMEM_FRAME_ETYPE;
    if (hdr->flags != 0)
        return XMEM_FRAME_EFLAGS;
    if (hdr->length > max_length)
        return XMEM_FRAME_ETOOBIG;
    return XMEM_FRAME_OK;
}

const char *xmem_frame_strerror(int status)
{
    switch (status) {
    case XMEM_FRAME_OK:
        return "ok";
    case XMEM_FRAME_EMAGIC:
        return "bad magic (not an xmem frame)";
    case XMEM_FRAME_EVERSION:
        return "unsupported protocol version (client and xmemd differ; upgrade the older one)";
    case XMEM_FRAME_ETYPE:
        return "unknown message type";
    case XMEM_FRAME_ETOOBIG:
        return "frame larger than the limit";
    case XMEM_FRAME_EFLAGS:
        return "reserved header flags set";
    default:
        return "unknown frame error";
    }
}
