// held_jobs.cpp — the book of held jobs on the loop thread, and when to scan (held_jobs.h).
#include "held_jobs.h"

#include "defaults.h"
#include "log.h"

#include <ctime>

namespace xmem::server
{

HeldJobs::HeldJobs(uv_loop_t *loop, const std::shared_ptr<const Config> &config)
    : m_loop(loop), m_config(config)
{
}

void HeldJobs::add(uint64_t request_id, uid_t uid)
{
    m_book[request_id].uid = uid;
}

HeldEntry *HeldJobs::finish(uint64_t request_id)
{
    auto it = m_book.find(request_id);
    if (it == m_book.end())
        return nullptr;
    it->second.finished = true;
    it->second.finished_s = time(nullptr);
    return &it->second;
}

void HeldJobs::decided(uint64_t request_id, const Decision &d)
{
    if (HeldEntry *e = finish(request_id))
        e->decision = d;
}

void HeldJobs::failed(uint64_t request_id, const std::string &why)
{
    if (HeldEntry *e = finish(request_id))
        e->why = why;
}

std::vector<uint64_t> HeldJobs::held_for(uid_t uid) const
{
    std::vector<uint64_t> out;
    for (const auto &[id, e] : m_book)
        if (e.uid == uid && !e.applied)
            out.push_back(id);
    return out;
}

// A scan is due at start (jobs a killed xmemd held) and while an ended estimate waits for its
// job to be listed: sbatch may still be submitting it when the estimate ends.
bool HeldJobs::scan_due() const
{
    // A site that never holds jobs (budget 0) has none to scan; a failed scan waits a while.
    if (m_config->interactive_budget_s <= 0 || uv_now(m_loop) < m_retry_at)
        return false;
    if (!m_started_scan_done)
        return true;
    for (const auto &[id, e] : m_book)
        if (e.finished && !e.applied)
            return true;
    return false;
}

void HeldJobs::tick()
{
    if (m_scanning)
        return;
    // Entries a held deadline old: their job was released by slurmctld, or never came.
    long now = time(nullptr);
    long keep = m_config->policy.held_deadline_s;
    for (auto it = m_book.begin(); it != m_book.end();)
        it = it->second.finished && now - it->second.finished_s > keep ? m_book.erase(it)
                                                                       : std::next(it);
    if (!scan_due())
        return;
    m_scanning = true;
    m_snapshot = m_book;
    m_scan_config = m_config;
    m_applied.clear();
    m_work.data = this;
    uv_queue_work(m_loop, &m_work, scan_work, scan_done);
}

void HeldJobs::scan_done(uv_work_t *w, int status)
{
    auto *self = static_cast<HeldJobs *>(w->data);
    self->m_scanning = false;
    if (status == 0 && self->m_scan_ok)
        self->m_started_scan_done = true;
    else
        self->m_retry_at = uv_now(self->m_loop) + k_held_scan_retry_ms;
    for (uint64_t id : self->m_applied) {
        auto it = self->m_book.find(id);
        if (it != self->m_book.end())
            it->second.applied = true;
    }
    self->m_scan_config.reset();
}

} // namespace xmem::server
