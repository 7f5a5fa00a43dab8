// estimate_owners.h — what an estimate request needs of xmemd, handed to it whole instead of
// the Daemon: the loop, the current config, the ledger, cache, scheduler and metrics it shares
// with the server, and the owners that only requests use (the jobs in flight, each user's
// load, the prepare line, the leaders, the threadpool's count). The Daemon builds it once and
// reads from it only the count of jobs (drain) and the status listing. Loop thread only.
#ifndef XMEMD_ESTIMATE_OWNERS_H
#define XMEMD_ESTIMATE_OWNERS_H

#include "cache.h"
#include "config.h"
#include "leaders.h"
#include "ledger.h"
#include "metrics.h"
#include "prepare_line.h"
#include "scheduler.h"
#include "user_load.h"

#include <functional>
#include <memory>
#include <set>
#include <uv.h>

namespace xmem::server
{

struct EstimateJob;
class HeldJobs;

// The threadpool's threads and how many estimate work items hold one now. Every work item goes
// on through take() and its after-callback calls give() first, so idle() counts the free ones.
class PoolCount
{
  public:
    explicit PoolCount(int threads) : m_threads(threads) {}
    void take() { m_busy++; }
    void give() { m_busy--; }
    int idle() const { return m_threads - m_busy; }
    int threads() const { return m_threads; }

  private:
    int m_threads; // the pool's size, set by main.cpp before libuv started it
    int m_busy = 0;
};

struct EstimateOwners {
    EstimateOwners(uv_loop_t *loop_, const std::shared_ptr<const Config> &config_,
                   const bool &draining_, Cache &cache_, Scheduler &scheduler_, Metrics &metrics_,
                   int pool_threads)
        : loop(loop_), config(config_), draining(draining_), cache(cache_), scheduler(scheduler_),
          metrics(metrics_), pool(pool_threads)
    {
    }
    // Shared with the server.
    uv_loop_t *loop;
    const std::shared_ptr<const Config> &config; // the current one: a reload replaces it
    const bool &draining;                        // no new profile starts once set
    Ledger *ledger = nullptr;                    // set once opened (Daemon::open_ledger)
    Cache &cache;
    Scheduler &scheduler;
    Metrics &metrics;
    // The requests' own.
    std::set<EstimateJob *> jobs; // every job from its first byte until it is freed
    UserLoads user_load;
    PrepareLine prepare_line;
    Leaders leaders;          // cache misses being profiled (or queued to be), by cache key
    HeldJobs *held = nullptr; // the jobs held in Slurm for their estimates (docs/async.md)
    PoolCount pool;
    std::function<void()> job_freed; // a job was freed: the Daemon may finish its drain
};

} // namespace xmem::server
#endif
