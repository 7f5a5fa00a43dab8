// scheduler.h — profiling slots: a global and a per-user limit, and a bounded FIFO queue.
// A full queue is an immediate refusal (busy), never a wait, except that no user is refused
// while another holds more than one queued estimate more than they do: that user's newest
// queued estimate is refused (busy) instead, so one user cannot take the queue from the rest
// (max-min fairness; docs/protocol.md). Loop thread only.
#ifndef XMEMD_SCHEDULER_H
#define XMEMD_SCHEDULER_H

#include <deque>
#include <map>
#include <sys/types.h>
#include <vector>

namespace xmem::server
{

struct EstimateJob;

class Scheduler
{
  public:
    enum class Admit { start_now, queued, full };
    void configure(int max_global, int max_per_user, int queue_cap);
    // `evicted`: when the queue was full and `job` took the place of another user's newest
    // queued estimate, that estimate (out of the queue: the caller refuses it busy); else null.
    Admit submit(EstimateJob *job, uid_t uid, EstimateJob **evicted);
    // A slot of `uid` is free again; returns queued jobs that may start now (in queue order,
    // skipping users at their own limit so one user cannot block the others).
    std::vector<EstimateJob *> finish(uid_t uid);
    // Starts what the current limits allow (after a reload raised them).
    std::vector<EstimateJob *> pump();
    // Empties the queue (shutdown): returns the jobs that never started.
    std::vector<EstimateJob *> take_queue();
    // Removes a queued job (its deadline passed); false if it was not queued.
    bool remove(EstimateJob *job);
    int queued() const { return (int)m_queue.size(); }
    int running() const { return m_running; }

  private:
    bool has_slot(uid_t uid) const;
    int queued_by(uid_t uid) const;
    // The newest queued estimate of the user holding the most queued, if they hold more than
    // `mine` + 1; removed from the queue.
    EstimateJob *take_from_largest(int mine);
    int m_max_global = 1, m_max_user = 1, m_cap = 0;
    int m_running = 0;
    std::map<uid_t, int> m_by_user;
    std::deque<std::pair<EstimateJob *, uid_t>> m_queue;
};

} // namespace xmem::server
#endif
