// estimate_deadlines.cpp — the estimate request's deadline: the client's (bounded), or the
// default. It binds only while the request waits for someone else, a profiling slot or an
// identical request's profile: once its own profile starts, the sandbox's wall time bounds it.
#include "defaults.h"
#include "estimate_steps.h"

#include <algorithm>

namespace xmem::server
{

uint64_t deadline_of(const EstimateRequest &req, uint64_t received_ms)
{
    int deadline = req.deadline_ms > 0 ? req.deadline_ms : k_default_deadline_ms;
    return received_ms + (uint64_t)std::min(deadline, k_max_deadline_ms);
}

bool refuse_if_late(EstimateJob *job, uint64_t now_ms)
{
    if (now_ms < job->deadline_ms)
        return false;
    // Its slot is free again: the next queued may start.
    for (EstimateJob *next : job->owners->scheduler.finish(job->peer.uid))
        estimate_start_profile(next);
    fail_job(job, Outcome::deadline_expired,
             "xmem: the request's deadline passed while it waited for a profiling "
             "slot (raise the deadline or retry)");
    return true;
}

void estimate_sweep_deadlines(EstimateOwners &o)
{
    uint64_t now = uv_now(o.loop);
    std::vector<EstimateJob *> expired;
    for (EstimateJob *job : o.jobs) {
        if (!job->deadline_ms || now < job->deadline_ms)
            continue;
        switch (advance(job, Event::expire)) {
        case Action::stop_following: // stops waiting for an identical profile (below)
            expired.push_back(job);
            break;
        case Action::leave_queue:
            if (o.scheduler.remove(job))
                expired.push_back(job);
            break;
        default:
            break;
        }
    }
    std::vector<EstimateJob *> left_alone; // leaders whose last follower just expired
    for (EstimateJob *job : expired) {
        EstimateJob *leader = job->leader;
        if (leader && stop_following(job))
            left_alone.push_back(leader);
        fail_job(job, Outcome::deadline_expired,
                 "xmem: the request's deadline passed while it waited for a profiling slot");
    }
    for (EstimateJob *leader : left_alone)
        if (o.jobs.count(leader) && !leader->conn)
            abandon(leader);
}

} // namespace xmem::server
