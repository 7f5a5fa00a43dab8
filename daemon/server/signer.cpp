// signer.cpp — decision payload formatting and MUNGE encoding.
#include "signer.h"

#include "contract/request_env.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <munge.h>

namespace xmem::server
{

// One payload word: a GPU name from the estimator or a GRES string from the client must not
// add fields ("A100 uid=0 limit=1") to what job_submit.lua reads.
static std::string payload_word(const std::string &v)
{
    if (v.empty())
        return "-";
    std::string out = v;
    for (char &c : out)
        if (!(isalnum((unsigned char)c) || c == '.' || c == '_' || c == ':' || c == '-'))
            c = '_';
    return out;
}

std::string decision_payload(const Decision &d)
{
    return "xmem-decision v1 uid=" + std::to_string(d.uid) +
           " request=" + std::to_string(d.request_id) + " peak=" + std::to_string(d.peak_bytes) +
           " limit=" + std::to_string(d.limit_bytes) + " gpu=" + payload_word(d.gpu) +
           " script=" + payload_word(d.script_sha256) + " dir=" + payload_word(d.dir_sha256) +
           " gres=" + payload_word(d.gres) + " envnames=" + payload_word(request_env_names()) +
           " env=" + payload_word(d.env_sha256) + " expires=" + std::to_string(d.expires) +
           (d.ranks > 1 ? " ranks=" + std::to_string(d.ranks) : "") +
           (d.job_id ? " job=" + std::to_string(d.job_id) : "");
}

static const char *const k_bound_env[] = {XMEM_REQUEST_ENV_NAMES};

std::string request_env_names()
{
    std::string out;
    for (const char *name : k_bound_env)
        out += (out.empty() ? "" : ":") + std::string(name);
    return out;
}

std::string request_env_text(const std::vector<std::pair<std::string, std::string>> &env)
{
    std::string out;
    for (const char *name : k_bound_env) {
        auto it =
            std::find_if(env.begin(), env.end(), [&](const auto &kv) { return kv.first == name; });
        out += name;
        if (it != env.end())
            out += "=" + std::to_string(it->second.size()) + ":" + it->second;
        out += "\n";
    }
    return out;
}

Result<std::string> munge_sign(const std::string &payload, const std::string &socket,
                               int ttl_seconds)
{
    munge_ctx_t ctx = munge_ctx_create();
    if (!ctx)
        return Result<std::string>::fail("cannot create a MUNGE context (out of memory)");
    if (!socket.empty() && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS) {
        munge_ctx_destroy(ctx);
        return Result<std::string>::fail("cannot set the MUNGE socket " + socket);
    }
    munge_ctx_set(ctx, MUNGE_OPT_TTL, ttl_seconds);
    char *cred = nullptr;
    munge_err_t e = munge_encode(&cred, ctx, payload.data(), (int)payload.size());
    if (e != EMUNGE_SUCCESS) {
        std::string why = munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e);
        munge_ctx_destroy(ctx);
        free(cred);
        return Result<std::string>::fail("munge_encode failed: " + why + " (is munged running" +
                                         (socket.empty() ? "" : " at " + socket) + "?)");
    }
    std::string out(cred);
    free(cred);
    munge_ctx_destroy(ctx);
    return Result<std::string>::ok(std::move(out));
}

} // namespace xmem::server
