/*
 * estimate_request.cpp — the estimate request's life on the loop thread: begin, prepare, lead
 * or follow, schedule, profile, record. Each step moves the job's stage through advance(), the
 * one door to the transition function (estimate_stage.h); the blocking steps run on the
 * threadpool (estimate_work.cpp), and every path ends in record(): one ledger row, then the
 * answer, then the job is freed (estimate_reply.cpp).
 */
#include "estimate_steps.h"
#include "log.h"

#include <algorithm>
#include <cassert>
#include <ctime>

namespace xmem::server
{

namespace
{

void after_prepare(uv_work_t *w, int status);
void after_profile(uv_work_t *w, int status);
void schedule_profile(EstimateJob *job);

// Bytes a request holds while in flight: what it keeps in memory for its whole life.
uint64_t request_bytes(const EstimateRequest &r)
{
    uint64_t n = r.cwd.size() + r.script.size() + r.wrap.size();
    for (const auto &a : r.argv)
        n += a.size();
    for (const auto &[k, v] : r.env)
        n += k.size() + v.size();
    for (const auto *lines : {&r.preamble, &r.skipped})
        for (const auto &l : *lines)
            n += l.text.size();
    return n;
}

// Counts the job against its user's in-flight bounds, or says which bound it would cross.
Result<bool> take_load(EstimateJob *job)
{
    uint64_t bytes = request_bytes(job->req);
    auto taken = job->owners->user_load.take(job->peer.uid, bytes);
    if (taken)
        job->load_bytes = bytes;
    return taken;
}

// Whether anyone still waits for the job's answer: its own client, or a follower's.
bool has_waiter(const EstimateJob *job)
{
    return job->conn || job->held || !job->followers.empty();
}

// Puts the job's preparation on the threadpool, or in line behind its user's others when the
// user has k_max_preparing_per_user there already and the pool has no thread to spare beyond
// the reserve for other users (finding 8).
void begin_prepare(EstimateJob *job)
{
    EstimateOwners &o = *job->owners;
    if (!o.prepare_line.enter(job->peer.uid, job, o.pool.idle())) {
        advance(job, Event::wait_in_line);
        return;
    }
    advance(job, Event::prepare);
    queue_on_pool(job, work_prepare, after_prepare);
}

// The user's preparation ended: the next of theirs that waits takes its place. One whose
// client left meanwhile was already taken out of line (abandon).
void end_prepare(EstimateJob *job)
{
    if (EstimateJob *next = job->owners->prepare_line.end(job->peer.uid))
        begin_prepare(next);
}

void after_prepare(uv_work_t *w, int status)
{
    EstimateJob *job = job_of(w);
    EstimateOwners &o = *job->owners;
    left_pool(job);
    end_prepare(job);
    if (status == UV_ECANCELED)
        return fail_job(job, Outcome::shutting_down, "xmem: xmemd is shutting down");
    if (job->cached) {
        o.metrics.cache_hit();
        return record(job);
    }
    if (job->outcome != Outcome::estimated)
        return record(job);
    if (!job->conn && !job->held) // the client left while it was prepared
        return fail_job(job, Outcome::client_gone, client_gone_message());
    if (EstimateJob *leader = o.leaders.find(job->key)) {
        advance(job, Event::follow);
        job->leader = leader;
        leader->followers.push_back(job);
        return;
    }
    schedule_profile(job);
}

std::string busy_message(const Scheduler &s, const char *why)
{
    return "xmem: xmemd is busy (" + std::to_string(s.queued()) + " estimates queued" + why +
           "); retry in a minute";
}

// A cache miss that leads: it profiles, and identical requests arriving meanwhile follow.
void schedule_profile(EstimateJob *job)
{
    EstimateOwners &o = *job->owners;
    o.leaders.lead(job->key, job); // first: a refusal below hands its followers on
    o.metrics.cache_miss();        // a miss is a request that profiles for itself
    if (o.draining)
        return fail_job(job, Outcome::shutting_down, "xmem: xmemd is shutting down");
    EstimateJob *evicted = nullptr;
    Scheduler::Admit admit = o.scheduler.submit(job, job->peer.uid, &evicted);
    if (admit == Scheduler::Admit::queued) // before anything below may start it
        advance(job, Event::queue);
    if (evicted)
        fail_job(evicted, Outcome::busy, busy_message(o.scheduler, ", yours the most"));
    switch (admit) {
    case Scheduler::Admit::start_now:
        estimate_start_profile(job);
        return;
    case Scheduler::Admit::queued:
        return;
    case Scheduler::Admit::full:
        return fail_job(job, Outcome::busy, busy_message(o.scheduler, ""));
    }
}

void after_profile(uv_work_t *w, int)
{
    EstimateJob *job = job_of(w);
    EstimateOwners &o = *job->owners;
    left_pool(job);
    if (!job->conn && job->run.cancelled) {
        job->outcome = Outcome::client_gone;
        job->message = client_gone_message();
    }
    o.metrics.profile_seconds.observe(job->run.wall_seconds);
    if (outcome_is_answered(job->outcome)) {
        o.metrics.analyze_seconds.observe(job->est.analyze_seconds);
        if (job->est.gpu_memory_bytes == 0)
            job->est.gpu_memory_bytes = policy_gpu_bytes(job->cfg->policy, job->est.gpu);
        // Only a config still current may fill the cache (a reload clears it).
        if (job->cfg == o.config)
            o.cache.put(job->key, job->est, time(nullptr));
    }
    for (EstimateJob *next : o.scheduler.finish(job->peer.uid))
        estimate_start_profile(next);
    record(job);
}

// Outcomes that belong to the request, not to the job it names: a follower of a leader that
// ended this way must profile for itself.
bool outcome_is_the_leaders_own(Outcome o)
{
    return o == Outcome::busy || o == Outcome::deadline_expired || o == Outcome::shutting_down ||
           o == Outcome::sign_failed || o == Outcome::internal_error || o == Outcome::client_gone ||
           o == Outcome::too_many_in_flight;
}

// The leader is done: its followers get its verdict (each signed and recorded for itself), or,
// when the leader failed for its own reasons, the first follower leads the others anew.
void release_followers(EstimateJob *leader)
{
    EstimateOwners &o = *leader->owners;
    if (!o.leaders.step_down(leader->key, leader))
        return;
    std::vector<EstimateJob *> followers;
    followers.swap(leader->followers);
    if (followers.empty())
        return;
    if (outcome_is_the_leaders_own(leader->outcome)) {
        EstimateJob *next = followers.front();
        next->leader = nullptr;
        for (std::size_t i = 1; i < followers.size(); i++) {
            followers[i]->leader = next;
            next->followers.push_back(followers[i]);
        }
        return schedule_profile(next);
    }
    for (EstimateJob *f : followers) {
        f->leader = nullptr;
        f->outcome = leader->outcome;
        f->message = leader->message;
        f->est = leader->est;
        f->cached = outcome_is_answered(leader->outcome); // answered without a profile of its own
        if (f->cached) // a shared failure is no hit: the ratio would hide failing profiles
            o.metrics.cache_hit();
        record(f);
    }
}

} // namespace

Action advance(EstimateJob *job, Event event)
{
    auto step = estimate_step(job->stage, event);
    if (!step) {
        log_error("estimate request %llu: %s cannot happen while %s; refused (a bug)",
                  (unsigned long long)job->id, event_name(event), stage_name(job->stage));
        assert(!"illegal estimate transition");
        return Action::none;
    }
    job->stage = step->next;
    return step->action;
}

std::string client_gone_message()
{
    return "xmem: the client disconnected before the answer; the estimate was stopped";
}

void queue_on_pool(EstimateJob *job, uv_work_cb work, uv_after_work_cb after)
{
    job->owners->pool.take();
    job->work.data = job;
    uv_queue_work(job->owners->loop, &job->work, work, after);
}

void left_pool(EstimateJob *job)
{
    job->owners->pool.give();
}

bool stop_following(EstimateJob *job)
{
    EstimateJob *leader = job->leader;
    auto &f = leader->followers;
    f.erase(std::remove(f.begin(), f.end(), job), f.end());
    job->leader = nullptr;
    return !has_waiter(leader);
}

// Ends the work of a job nobody waits for any more. A leader that still has followers keeps
// going for them; otherwise its stage says what ends (estimate_stage.h): a follower stops
// waiting (and may leave its leader with nobody), a job in line or queued leaves and is
// recorded, a running profile is killed (after_profile records it). A job being prepared is
// caught by after_prepare; one being signed or committed just ends.
void abandon(EstimateJob *job)
{
    if (has_waiter(job))
        return;
    EstimateOwners &o = *job->owners;
    switch (advance(job, Event::abandon)) {
    case Action::leave_line:
        o.prepare_line.leave(job->peer.uid, job);
        return fail_job(job, Outcome::client_gone, client_gone_message());
    case Action::stop_following: {
        EstimateJob *leader = job->leader;
        bool leader_alone = stop_following(job);
        fail_job(job, Outcome::client_gone, client_gone_message());
        if (leader_alone)
            abandon(leader);
        return;
    }
    case Action::leave_queue:
        if (o.scheduler.remove(job))
            fail_job(job, Outcome::client_gone, client_gone_message());
        return;
    case Action::kill_profile:
        job->cancel = true;
        return;
    case Action::none:
        return;
    }
}

void fail_job(EstimateJob *job, Outcome o, std::string message)
{
    job->outcome = o;
    job->message = std::move(message);
    record(job);
}

void record(EstimateJob *job)
{
    release_followers(job);
    if (outcome_is_answered(job->outcome) && job->decision.empty()) {
        advance(job, Event::sign);
        queue_on_pool(job, work_sign, [](uv_work_t *w, int) {
            left_pool(job_of(w));
            commit_and_answer(job_of(w));
        });
        return;
    }
    commit_and_answer(job);
}

void estimate_begin(EstimateOwners &o, Conn *c, const nlohmann::json &body)
{
    auto *job = new EstimateJob;
    job->owners = &o;
    job->conn = c;
    job->peer = c->peer;
    job->cfg = o.config;
    job->received_ms = uv_now(o.loop);
    job->id = o.ledger->take_id(); // every estimate gets its row, whatever the outcome
    c->job = job;
    o.jobs.insert(job);
    auto req = estimate_parse(body);
    if (!req.ok())
        return fail_job(job, Outcome::bad_request, req.error().message);
    job->req = std::move(req).value();
    auto load = take_load(job);
    if (!load.ok())
        return fail_job(job, Outcome::too_many_in_flight, load.error().message);
    const Config &cfg = *job->cfg;
    job->deadline_ms = deadline_of(job->req, job->received_ms);
    // A request sbatch may leave after its budget goes on for the held job: its profile may
    // take up to the held deadline, not only the client's (docs/async.md).
    if (job->req.async_ok && cfg.interactive_budget_s > 0)
        job->deadline_ms = std::max(job->deadline_ms,
                                    job->received_ms + (uint64_t)cfg.policy.held_deadline_s * 1000);
    job->gpu =
        !job->req.gpu.empty() ? job->req.gpu : policy_target(cfg.policy, job->req.partition).gpu;
    job->steps = job->req.steps > 0 ? job->req.steps : cfg.steps;
    if (job->peer.uid == 0 && !cfg.allow_root)
        return fail_job(job, Outcome::root_refused,
                        "xmem: profiling as root is disabled (submit as a normal user, or set "
                        "allow_root: true in " +
                            (cfg.path.empty() ? "xmem.yaml" : cfg.path) + ")");
    if (daemon_euid() != 0 && job->peer.uid != daemon_euid())
        return fail_job(job, Outcome::cannot_switch_user,
                        "xmem: this xmemd runs as uid " + std::to_string(daemon_euid()) +
                            " and can only profile for itself (run xmemd as root)");
    begin_prepare(job);
}

void estimate_start_profile(EstimateJob *job)
{
    job->started_ms = uv_now(job->owners->loop);
    if (refuse_if_late(job, job->started_ms))
        return;
    advance(job, Event::start_profile);
    queue_on_pool(job, work_profile, after_profile);
}

void estimate_refuse_queued(EstimateJob *job, Outcome o, const std::string &message)
{
    fail_job(job, o, message);
}

void estimate_cancel_running(EstimateOwners &o)
{
    for (EstimateJob *job : o.jobs)
        if (advance(job, Event::cancel) == Action::kill_profile)
            job->cancel = true;
}

void estimate_forget_conn(EstimateJob *job)
{
    job->conn = nullptr;
    abandon(job);
}

} // namespace xmem::server
