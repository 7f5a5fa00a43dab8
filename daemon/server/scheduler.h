// scheduler.h — profiling slots: a global and a per-user limit, and a bounded FIFO queue.
// A full queue is an immediate refusal (busy), never a wait. Loop thread only.
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
    Admit submit(EstimateJob *job, uid_t uid);
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
    int m_max_global = 1, m_max_user = 1, m_cap = 0;
    int m_running = 0;
    std::map<uid_t, int> m_by_user;
    std::deque<std::pair<EstimateJob *, uid_t>> m_queue;
};

} // namespace xmem::server
#endif
