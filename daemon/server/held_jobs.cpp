// held_jobs.cpp — the book of held jobs on the loop thread, and when to scan (held_jobs.h).
#include "held_jobs.h"

#include "defaults.h"
#include "log.h"

#include <algorithm>
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
    m_waiting_rounds = 0; // its job is most likely listed already: look at once
    m_waiting_until = 0;
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

uint64_t held_wait_delay_ms(unsigned rounds)
{
    uint64_t delay = k_held_wait_first_ms;
    for (unsigned i = 1; i < rounds && delay < k_held_wait_last_ms; i++)
        delay *= 2;
    return std::min(delay, k_held_wait_last_ms);
}

// A scan is due at start (jobs a killed xmemd held) and while an ended estimate waits for its
// job to be listed: sbatch may still be submitting it when the estimate ends, or was killed
// and never will (held_wait_delay_ms spaces those scans out).
bool HeldJobs::scan_due() const
{
    // A site that never holds jobs (budget 0) has none to scan; a failed scan waits a while.
    if (m_config->interactive_budget_s <= 0 || uv_now(m_loop) < m_retry_at)
        return false;
    if (!m_started_scan_done)
        return true;
    if (uv_now(m_loop) < m_waiting_until)
        return false;
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

void HeldJobs::note_unlisted()
{
    // Ended before the scan began and still not applied: their jobs were not listed. One that
    // ended during the scan is looked for at once.
    bool waiting = false, ended_since = false;
    for (const auto &[id, e] : m_book) {
        if (!e.finished || e.applied)
            continue;
        auto it = m_snapshot.find(id);
        (it != m_snapshot.end() && it->second.finished ? waiting : ended_since) = true;
    }
    if (!waiting || ended_since) {
        m_waiting_rounds = 0;
        m_waiting_until = 0;
        return;
    }
    m_waiting_rounds++;
    m_waiting_until = uv_now(m_loop) + held_wait_delay_ms(m_waiting_rounds);
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
    if (status == 0 && self->m_scan_ok)
        self->note_unlisted();
}

} // namespace xmem::server
