// prepare_line.cpp — the per-user prepare line (prepare_line.h).
#include "prepare_line.h"

#include <algorithm>

namespace xmem::server
{

bool PrepareLine::enter(uid_t uid, EstimateJob *job, int idle_threads)
{
    Line &line = m_lines[uid];
    if (line.preparing >= m_max_per_user && idle_threads <= m_reserve) {
        line.waiting.push_back(job);
        return false;
    }
    line.preparing++;
    return true;
}

EstimateJob *PrepareLine::end(uid_t uid)
{
    auto it = m_lines.find(uid);
    if (it == m_lines.end())
        return nullptr;
    Line &line = it->second;
    line.preparing--;
    EstimateJob *next = nullptr;
    if (!line.waiting.empty()) {
        next = line.waiting.front();
        line.waiting.pop_front();
    }
    if (line.preparing <= 0 && line.waiting.empty())
        m_lines.erase(it);
    return next;
}

bool PrepareLine::leave(uid_t uid, EstimateJob *job)
{
    auto it = m_lines.find(uid);
    if (it == m_lines.end())
        return false;
    auto &w = it->second.waiting;
    auto pos = std::find(w.begin(), w.end(), job);
    if (pos == w.end())
        return false;
    w.erase(pos);
    if (it->second.preparing <= 0 && w.empty())
        m_lines.erase(it);
    return true;
}

int PrepareLine::preparing(uid_t uid) const
{
    auto it = m_lines.find(uid);
    return it == m_lines.end() ? 0 : it->second.preparing;
}

std::size_t PrepareLine::waiting(uid_t uid) const
{
    auto it = m_lines.find(uid);
    return it == m_lines.end() ? 0 : it->second.waiting.size();
}

} // namespace xmem::server
