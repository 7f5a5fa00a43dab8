// held_jobs.h — the batch jobs xmemd holds in Slurm while their estimates go on
// (docs/async.md). job_submit.lua queued each one held (begin_time) with a mark in its
// AdminComment, "xmem: estimating id=<request> uid=<uid> ...". This book keeps, by request id,
// whom the estimate is for and how it ended; a scan on a worker thread (held_scan.cpp) lists
// the marked jobs from the controller and narrows each (a signed decision naming the job) or
// releases it. A marked job the first scan finds that the book does not know (xmemd restarted)
// is released: none stays held. Loop thread only, but for the scan's own worker.
#ifndef XMEMD_HELD_JOBS_H
#define XMEMD_HELD_JOBS_H

#include "config.h"
#include "signer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <sys/types.h>
#include <uv.h>

namespace xmem::server
{

struct HeldEntry {
    uid_t uid = 0;
    bool finished = false;            // the estimate ended: decision or why is set
    bool applied = false;             // its job was updated; kept so a replay changes nothing
    std::optional<Decision> decision; // narrow: signed again with the job's id
    std::string why;                  // release: one line for the job's output
    long finished_s = 0;              // unix seconds; the entry is dropped a deadline later
};

// One job the controller lists with the mark.
struct MarkedJob {
    uint32_t job_id = 0;
    uint64_t request_id = 0;
    uid_t uid = 0;
};

// What the scan does to a marked job: the AdminComment root writes ("xmem-decision <cred>"
// or "xmem-release <why>"), empty when the job waits on.
// `at_start`: the first scan of this xmemd, which releases the jobs it does not know.
std::string held_action(const MarkedJob &job, const std::map<uint64_t, HeldEntry> &book,
                        const Config &cfg, bool at_start);
// The marked jobs in `squeue -h -t PD -O jobid:0/,admin_comment:0` output.
std::vector<MarkedJob> held_parse_listing(const std::string &listing);

// The loop-time delay before the next look for ended estimates' jobs after `rounds` scans in
// a row that did not find one of them listed (rounds >= 1): doubling, bounded.
uint64_t held_wait_delay_ms(unsigned rounds);

class HeldJobs
{
  public:
    HeldJobs(uv_loop_t *loop, const std::shared_ptr<const Config> &config);
    void add(uint64_t request_id, uid_t uid);
    void decided(uint64_t request_id, const Decision &d);
    void failed(uint64_t request_id, const std::string &why);
    // The request ids of `uid`'s estimates whose jobs are held (xmem status).
    std::vector<uint64_t> held_for(uid_t uid) const;
    // Sweep timer: starts a scan when one is due (an estimate ended, or xmemd just started).
    void tick();

  private:
    static void scan_work(uv_work_t *w);
    static void scan_done(uv_work_t *w, int status);
    bool scan_due() const;
    void note_unlisted();                   // after a scan: space out the looks for unlisted jobs
    HeldEntry *finish(uint64_t request_id); // marks the entry ended; null when unknown

    uv_loop_t *m_loop;
    const std::shared_ptr<const Config> &m_config;
    std::map<uint64_t, HeldEntry> m_book;
    bool m_started_scan_done = false; // the jobs held before this xmemd started are released
    bool m_scanning = false;
    uint64_t m_retry_at = 0; // loop time before which no scan starts (after a failed one)
    // Ended estimates whose jobs the last scans did not list: rounds in a row, and the loop
    // time before which no scan looks for them again; an estimate that ends resets both.
    unsigned m_waiting_rounds = 0;
    uint64_t m_waiting_until = 0;
    uv_work_t m_work{};
    // The scan's input and output, touched by its worker only while m_scanning.
    std::map<uint64_t, HeldEntry> m_snapshot;
    std::shared_ptr<const Config> m_scan_config;
    std::vector<uint64_t> m_applied;
    bool m_scan_ok = false;
};

} // namespace xmem::server
#endif
