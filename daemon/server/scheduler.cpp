// scheduler.cpp — slot accounting for profiles.
#include "scheduler.h"

#include <iterator>

namespace xmem::server
{

void Scheduler::configure(int max_global, int max_per_user, int queue_cap)
{
    m_max_global = max_global;
    m_max_user = max_per_user;
    m_cap = queue_cap;
}

bool Scheduler::has_slot(uid_t uid) const
{
    auto it = m_by_user.find(uid);
    int mine = it == m_by_user.end() ? 0 : it->second;
    return m_running < m_max_global && mine < m_max_user;
}

Scheduler::Admit Scheduler::submit(EstimateJob *job, uid_t uid, EstimateJob **evicted)
{
    *evicted = nullptr;
    if (has_slot(uid)) {
        m_running++;
        m_by_user[uid]++;
        return Admit::start_now;
    }
    if ((int)m_queue.size() >= m_cap) {
        if (m_cap == 0 || !(*evicted = take_from_largest(queued_by(uid))))
            return Admit::full;
    }
    m_queue.emplace_back(job, uid);
    return Admit::queued;
}

int Scheduler::queued_by(uid_t uid) const
{
    int n = 0;
    for (const auto &[job, owner] : m_queue)
        n += owner == uid;
    return n;
}

EstimateJob *Scheduler::take_from_largest(int mine)
{
    std::map<uid_t, int> count;
    uid_t largest = 0;
    int most = 0;
    for (const auto &[job, owner] : m_queue)
        if (++count[owner] > most) {
            most = count[owner];
            largest = owner;
        }
    if (most <= mine + 1)
        return nullptr; // after the newcomer queues, nobody would hold more than it
    for (auto it = m_queue.rbegin(); it != m_queue.rend(); ++it)
        if (it->second == largest) {
            EstimateJob *job = it->first;
            m_queue.erase(std::next(it).base());
            return job;
        }
    return nullptr;
}

std::vector<EstimateJob *> Scheduler::finish(uid_t uid)
{
    m_running--;
    if (--m_by_user[uid] <= 0)
        m_by_user.erase(uid);
    return pump();
}

std::vector<EstimateJob *> Scheduler::pump()
{
    std::vector<EstimateJob *> start;
    for (auto it = m_queue.begin(); it != m_queue.end() && m_running < m_max_global;) {
        if (has_slot(it->second)) {
            m_running++;
            m_by_user[it->second]++;
            start.push_back(it->first);
            it = m_queue.erase(it);
        } else {
            ++it;
        }
    }
    return start;
}

std::vector<EstimateJob *> Scheduler::take_queue()
{
    std::vector<EstimateJob *> out;
    for (auto &[job, uid] : m_queue)
        out.push_back(job);
    m_queue.clear();
    return out;
}

bool Scheduler::remove(EstimateJob *job)
{
    for (auto it = m_queue.begin(); it != m_queue.end(); ++it)
        if (it->first == job) {
            m_queue.erase(it);
            return true;
        }
    return false;
}

} // namespace xmem::server
