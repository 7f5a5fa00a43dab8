// user_load.cpp — per-user in-flight bounds (user_load.h).
#include "user_load.h"

#include <string>

namespace xmem::server
{

Result<bool> UserLoads::take(uid_t uid, uint64_t bytes)
{
    auto it = m_load.find(uid);
    Load load = it == m_load.end() ? Load{} : it->second;
    if (load.requests >= m_max_requests)
        return Result<bool>::fail(
            "xmem: you already have " + std::to_string(load.requests) +
            " estimates in flight (the limit per user); wait for them to finish");
    if (load.bytes + bytes > m_max_bytes)
        return Result<bool>::fail(
            "xmem: your estimates in flight already hold " + std::to_string(load.bytes) +
            " bytes of command line and environment (limit " + std::to_string(m_max_bytes) +
            " per user); wait for them to finish");
    load.requests++;
    load.bytes += bytes;
    m_load[uid] = load;
    return Result<bool>::ok(true);
}

void UserLoads::release(uid_t uid, uint64_t bytes)
{
    auto it = m_load.find(uid);
    if (it == m_load.end())
        return;
    it->second.requests--;
    it->second.bytes -= bytes;
    if (it->second.requests <= 0)
        m_load.erase(it);
}

int UserLoads::requests(uid_t uid) const
{
    auto it = m_load.find(uid);
    return it == m_load.end() ? 0 : it->second.requests;
}

uint64_t UserLoads::bytes(uid_t uid) const
{
    auto it = m_load.find(uid);
    return it == m_load.end() ? 0 : it->second.bytes;
}

} // namespace xmem::server
