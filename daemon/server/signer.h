// signer.h — the signed decision: a one-line payload encoded into a MUNGE credential that
// job_submit.lua verifies with unmunge (docs/protocol.md, "Decisions").
#ifndef XMEMD_SIGNER_H
#define XMEMD_SIGNER_H

#include "allocator/result.h"

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace xmem::server
{

struct Decision {
    uid_t uid;
    uint64_t request_id;
    uint64_t peak_bytes;
    uint64_t limit_bytes;
    std::string gpu;
    long expires; // unix seconds
};

// "xmem-decision v1 uid=<uid> request=<id> peak=<bytes> limit=<bytes> gpu=<name> expires=<s>"
std::string decision_payload(const Decision &d);

// munge_encode with the given socket ("" = default) and TTL; blocking (worker thread).
Result<std::string> munge_sign(const std::string &payload, const std::string &socket,
                               int ttl_seconds);

} // namespace xmem::server
#endif
