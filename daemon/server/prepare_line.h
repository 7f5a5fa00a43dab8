// prepare_line.h — each user's preparations on the threadpool (k_max_preparing_per_user), and
// the jobs that wait for one of them to end, oldest first, so one user's burst of cache-key
// hashing cannot take the pool from the others (finding 8). Beyond the bound a user may take
// more threads while more than k_prepare_reserve_threads stay idle. Loop thread only; the
// jobs are only held, never looked into.
#ifndef XMEMD_PREPARE_LINE_H
#define XMEMD_PREPARE_LINE_H

#include "defaults.h"

#include <deque>
#include <map>
#include <sys/types.h>

namespace xmem::server
{

struct EstimateJob;

class PrepareLine
{
  public:
    explicit PrepareLine(int max_per_user = k_max_preparing_per_user,
                         int reserve = k_prepare_reserve_threads)
        : m_max_per_user(max_per_user), m_reserve(reserve)
    {
    }
    // True: `job` may go on the pool now (counted as preparing). False: it waits in its
    // user's line until end() hands it back.
    bool enter(uid_t uid, EstimateJob *job, int idle_threads);
    // A preparation of `uid` ended: the next of theirs in line, out of line now (the caller
    // enters it again), or null.
    EstimateJob *end(uid_t uid);
    // Takes `job` out of its user's line; false when it was not in line.
    bool leave(uid_t uid, EstimateJob *job);
    int preparing(uid_t uid) const;
    std::size_t waiting(uid_t uid) const;

  private:
    struct Line {
        int preparing = 0;
        std::deque<EstimateJob *> waiting;
    };
    int m_max_per_user, m_reserve;
    std::map<uid_t, Line> m_lines;
};

} // namespace xmem::server
#endif
