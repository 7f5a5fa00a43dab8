// estimate_pending.cpp — a batch job's estimate that outlives sbatch's interactive budget
// (config interactive_budget_s; docs/async.md). Its client, which said it can take a later
// answer (request field "async"), is answered `pending` and leaves; sbatch submits the job,
// which job_submit.lua queues held. The request goes on as before, marked held so nobody
// abandons it, and ends in the book of held jobs (held_jobs.h), which narrows or releases the
// job when the estimate ends.
#include "estimate_steps.h"
#include "held_jobs.h"

#include <algorithm>

namespace xmem::server
{

namespace
{

// Whether the job's client has waited its budget and may go: a batch job's request (only a
// batch job can wait in the queue; salloc and srun wait at the terminal), not a check, and not
// about to be answered anyway.
bool budget_spent(const EstimateJob *job, uint64_t now)
{
    const Config &cfg = *job->cfg;
    if (!job->conn || job->held || !job->req.async_ok || job->req.check_only)
        return false;
    if ((job->req.script.empty() && job->req.wrap.empty()) || job->req.gres.empty())
        return false;
    if (cfg.interactive_budget_s <= 0 || !job->owners->held)
        return false;
    if (job->stage == Stage::received || job->stage == Stage::signing ||
        job->stage == Stage::committing || job->stage == Stage::done)
        return false;
    return now - job->received_ms >= (uint64_t)cfg.interactive_budget_s * 1000;
}

void hold(EstimateJob *job, uint64_t now)
{
    const Config &cfg = *job->cfg;
    // Under policy "whole" job_submit.lua queues the job unchanged, not held: no job will
    // carry the mark, so the book would only make the scan poll squeue for one until the
    // held deadline.
    if (cfg.policy.mode != "whole")
        job->owners->held->add(job->id, job->peer.uid);
    nlohmann::json r = outcome_reply(
        Outcome::pending, "xmem: the estimate is not ready after " +
                              std::to_string(cfg.interactive_budget_s) +
                              " s; the job is queued held until it is (at most " +
                              std::to_string(cfg.policy.held_deadline_s) + " s), then sized");
    r["request_id"] = job->id;
    job->conn->job = nullptr;
    conn_reply(job->conn, r);
    job->conn = nullptr;
    job->held = true;
    // The client's deadline no longer binds: the job waits in Slurm up to the held deadline.
    job->deadline_ms =
        std::max(job->deadline_ms, now + (uint64_t)cfg.policy.held_deadline_s * 1000);
}

} // namespace

void estimate_sweep_budgets(EstimateOwners &o)
{
    uint64_t now = uv_now(o.loop);
    for (EstimateJob *job : o.jobs)
        if (budget_spent(job, now))
            hold(job, now);
}

} // namespace xmem::server
