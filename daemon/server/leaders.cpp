// leaders.cpp — one profile per cache key in flight (leaders.h).
#include "leaders.h"

namespace xmem::server
{

EstimateJob *Leaders::find(const std::string &key) const
{
    auto it = m_by_key.find(key);
    return it == m_by_key.end() ? nullptr : it->second;
}

void Leaders::lead(const std::string &key, EstimateJob *job)
{
    m_by_key[key] = job;
}

bool Leaders::step_down(const std::string &key, const EstimateJob *job)
{
    auto it = m_by_key.find(key);
    if (it == m_by_key.end() || it->second != job)
        return false;
    m_by_key.erase(it);
    return true;
}

} // namespace xmem::server
