// test-frame.cpp — the 16-byte frame header codec (daemon/client/xmem_frame.c).
#include "cmocka.hpp"
#include "test-list.h"
#include "contract/xmem_proto.h"

#include <cstring>

static void roundtrip(void **)
{
    uint8_t b[XMEM_FRAME_HEADER_SIZE];
    xmem_frame_encode(b, XMEM_MSG_ESTIMATE, 1234);
    xmem_frame_header h;
    assert_int_equal(xmem_frame_decode(b, XMEM_MAX_REQUEST_BYTES, &h), XMEM_FRAME_OK);
    assert_int_equal(h.magic, XMEM_PROTO_MAGIC);
    assert_int_equal(h.version, XMEM_PROTO_VERSION);
    assert_int_equal(h.type, XMEM_MSG_ESTIMATE);
    assert_int_equal(h.length, 1234);
    assert_int_equal(h.flags, 0);
}

static void big_endian_layout(void **)
{
    uint8_t b[XMEM_FRAME_HEADER_SIZE];
    xmem_frame_encode(b, XMEM_MSG_REPLY, 0x01020304);
    const uint8_t want[] = {'X', 'M', 'E', 'M', 0, 1, 0, 128, 1, 2, 3, 4, 0, 0, 0, 0};
    assert_memory_equal(b, want, sizeof(want));
}

static void rejects_bad_magic(void **)
{
    uint8_t b[XMEM_FRAME_HEADER_SIZE];
    xmem_frame_encode(b, XMEM_MSG_STATUS, 0);
    b[0] = 'G'; // "GET " from a confused HTTP client
    xmem_frame_header h;
    assert_int_equal(xmem_frame_decode(b, 100, &h), XMEM_FRAME_EMAGIC);
    assert_string_equal(xmem_frame_strerror(XMEM_FRAME_EMAGIC), "bad magic (not an xmem frame)");
}

static void rejects_version_type_flags(void **)
{
    uint8_t b[XMEM_FRAME_HEADER_SIZE];
    xmem_frame_header h;
    xmem_frame_encode(b, XMEM_MSG_STATUS, 0);
    b[5] = 2;
    assert_int_equal(xmem_frame_decode(b, 100, &h), XMEM_FRAME_EVERSION);
    xmem_frame_encode(b, 77, 0);
    assert_int_equal(xmem_frame_decode(b, 100, &h), XMEM_FRAME_ETYPE);
    xmem_frame_encode(b, XMEM_MSG_STATUS, 0);
    b[15] = 1;
    assert_int_equal(xmem_frame_decode(b, 100, &h), XMEM_FRAME_EFLAGS);
}

static void enforces_limit_before_body(void **)
{
    uint8_t b[XMEM_FRAME_HEADER_SIZE];
    xmem_frame_header h;
    xmem_frame_encode(b, XMEM_MSG_ESTIMATE, XMEM_MAX_REQUEST_BYTES);
    assert_int_equal(xmem_frame_decode(b, XMEM_MAX_REQUEST_BYTES, &h), XMEM_FRAME_OK);
    xmem_frame_encode(b, XMEM_MSG_ESTIMATE, XMEM_MAX_REQUEST_BYTES + 1);
    assert_int_equal(xmem_frame_decode(b, XMEM_MAX_REQUEST_BYTES, &h), XMEM_FRAME_ETOOBIG);
    assert_int_equal(h.length, XMEM_MAX_REQUEST_BYTES + 1); // reported for the message
    xmem_frame_encode(b, XMEM_MSG_ESTIMATE, 0xffffffffu);
    assert_int_equal(xmem_frame_decode(b, XMEM_MAX_REQUEST_BYTES, &h), XMEM_FRAME_ETOOBIG);
}

static void every_status_has_text(void **)
{
    for (int s = 0; s >= -5; s--)
        assert_string_not_equal(xmem_frame_strerror(s), "unknown frame error");
    assert_string_equal(xmem_frame_strerror(-99), "unknown frame error");
}

int test_group_frame(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(roundtrip),
        cmocka_unit_test(big_endian_layout),
        cmocka_unit_test(rejects_bad_magic),
        cmocka_unit_test(rejects_version_type_flags),
        cmocka_unit_test(enforces_limit_before_body),
        cmocka_unit_test(every_status_has_text),
    };
    return cmocka_run_group_tests_name("frame", tests, nullptr, nullptr);
}
