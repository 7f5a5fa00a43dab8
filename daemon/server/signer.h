// signer.h — the signed decision: a one-line payload encoded into a MUNGE credential that
// job_submit.lua verifies with unmunge (docs/protocol.md, "Decisions").
#ifndef XMEMD_SIGNER_H
#define XMEMD_SIGNER_H

#include "common/result.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>
#include <sys/types.h>

namespace xmem::server
{

struct Decision {
    uid_t uid;
    uint64_t request_id;
    uint64_t peak_bytes;
    uint64_t limit_bytes;
    std::string gpu;
    // What the decision was made for, checked by job_submit.lua against the job it is
    // attached to: the SHA-256 of the batch script (bound_script.h; "-": none, srun/salloc),
    // the SHA-256 of the working directory the profile ran in, as the path the request named
    // (the job's work_dir is that same string: see docs/protocol.md, "Decisions"), and the
    // GPU request as the client canonicalised it ("gpu:1", "gpu:a100:1"; "-": not given).
    std::string script_sha256;
    std::string dir_sha256;
    std::string gres;
    // The SHA-256 of the environment the profile ran with, over request_env_names() only
    // (request_env_text): what job_submit.lua can look up in a batch job's environment.
    std::string env_sha256;
    long expires; // unix seconds
    // The Slurm job a held job's narrowing is for (docs/async.md); 0: none (at submission).
    uint32_t job_id = 0;
    // The ranks the job was profiled as (--world-size): job_submit.lua keeps a job whole when
    // they outnumber its GPUs (several ranks would share one GPU's share). Written past one.
    long ranks = 1;
};

// "xmem-decision v1 uid=<uid> request=<id> peak=<bytes> limit=<bytes> gpu=<name>
//  script=<sha256|-> dir=<sha256> gres=<request|-> envnames=<NAME:NAME:...> env=<sha256>
//  expires=<s>[ ranks=<n>][ job=<id>]" (ranks: past one; job: a held job's narrowing,
//  docs/async.md). Every value is one word of
// [A-Za-z0-9._:-] (anything else becomes '_', an empty value "-"), so no value can carry a
// space and a second "k=v" into the payload.
std::string decision_payload(const Decision &d);

// The variables a decision binds, ':'-joined, in contract/request_env.h's order: its fixed
// names, not its prefix families, since slurmctld's Lua can look a job's variable up by name
// but cannot list them. Signed in the payload, so job_submit.lua holds no copy of the list.
std::string request_env_names();

// What env_sha256 hashes: for each bound name, "NAME=<bytes>:<value>\n" when the request
// carries it, "NAME\n" when not (the length keeps a value from faking the next line).
std::string request_env_text(const std::vector<std::pair<std::string, std::string>> &env);

// munge_encode with the given socket ("" = default) and TTL; blocking (worker thread).
Result<std::string> munge_sign(const std::string &payload, const std::string &socket,
                               int ttl_seconds);

} // namespace xmem::server
#endif
