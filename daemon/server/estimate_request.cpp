/*
 * estimate_request.cpp — the estimate pipeline. Loop-thread steps are plain functions; the three
 * blocking steps (prepare, profile, sign) run on the libuv threadpool and touch only their
 * job. Every path ends in record(): one ledger row, then the answer, then the job is freed.
 */
#include "bound_script.h"
#include "cache_key.h"
#include "defaults.h"
#include "estimate_job.h"
#include "log.h"
#include "redact.h"
#include "sha256.h"
#include "signer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace xmem::server
{

namespace
{

void record(EstimateJob *job);
void after_prepare(uv_work_t *w, int status);
void begin_prepare(EstimateJob *job);
bool leave_prepare_line(EstimateJob *job);
void after_profile(uv_work_t *w, int status);
void sign(EstimateJob *job);

EstimateJob *job_of(uv_work_t *w)
{
    return static_cast<EstimateJob *>(w->data);
}

std::string joined_argv(const std::vector<std::string> &argv)
{
    std::string s;
    for (const auto &a : argv)
        s += (s.empty() ? "" : " ") + a;
    return s;
}

std::string gib(uint64_t b)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%.2f GiB", b / 1073741824.0);
    return buf;
}

void schedule_profile(EstimateJob *job);

std::string client_gone_message()
{
    return "xmem: the client disconnected before the answer; the estimate was stopped";
}

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
    auto taken = job->d->user_load().take(job->peer.uid, bytes);
    if (!taken)
        return taken;
    job->load_bytes = bytes;
    job->load_counted = true;
    return taken;
}

void release_load(EstimateJob *job)
{
    if (!job->load_counted)
        return;
    job->d->user_load().release(job->peer.uid, job->load_bytes);
    job->load_counted = false;
}

// Whether anyone still waits for the job's answer: its own client, or a follower's.
bool has_waiter(const EstimateJob *job)
{
    return job->conn || !job->followers.empty();
}

void fail_job(EstimateJob *job, Outcome o, std::string message);

// Ends the work of a job nobody waits for any more. A follower stops waiting (and may leave
// its leader with nobody); a leader that still has followers keeps going for them; otherwise
// a queued job leaves the queue and a running profile is killed (after_profile records it).
// A job being prepared is caught by after_prepare; one being signed or committed just ends.
void abandon(EstimateJob *job)
{
    Daemon *d = job->d;
    job->abandoned = true;
    if (EstimateJob *leader = job->leader) {
        auto &f = leader->followers;
        f.erase(std::remove(f.begin(), f.end(), job), f.end());
        job->leader = nullptr;
        fail_job(job, Outcome::client_gone, client_gone_message());
        if (!has_waiter(leader))
            abandon(leader);
        return;
    }
    if (has_waiter(job))
        return;
    if (leave_prepare_line(job))
        return fail_job(job, Outcome::client_gone, client_gone_message());
    if (job->preparing)
        return;
    if (job->running) {
        job->cancel = true;
        return;
    }
    if (d->scheduler().remove(job))
        fail_job(job, Outcome::client_gone, client_gone_message());
}

void fail_job(EstimateJob *job, Outcome o, std::string message)
{
    job->outcome = o;
    job->message = std::move(message);
    record(job);
}

// Can `u` (whose filesystem identity this thread has taken) chdir into `dir`? faccessat2 with
// AT_EACCESS checks with the thread's fsuid, groups and ACLs; "dir/." makes the kernel also
// refuse a non-directory (ENOTDIR), so one syscall answers on the hot path. Without
// faccessat2 (kernel < 5.8) the mode bits are checked by hand. Sets errno when not.
bool can_enter(const std::string &dir, const UserIdentity &u)
{
#ifdef SYS_faccessat2
    if (syscall(SYS_faccessat2, AT_FDCWD, (dir + "/.").c_str(), X_OK, AT_EACCESS) == 0)
        return true;
    if (errno != ENOSYS)
        return false;
#endif
    int fd = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC); // search on every parent
    if (fd < 0)
        return false;
    struct stat st;
    int rc = fstat(fd, &st);
    close(fd);
    if (rc != 0)
        return false;
    bool in_group = st.st_gid == u.gid;
    for (gid_t g : u.groups)
        in_group |= (g == st.st_gid);
    mode_t need = st.st_uid == u.uid ? S_IXUSR : in_group ? S_IXGRP : S_IXOTH;
    if (u.uid == 0 || (st.st_mode & need))
        return true;
    errno = EACCES;
    return false;
}

// ---- worker: who is asking, can they use cwd and read the script, what is the cache key
void work_prepare(uv_work_t *w)
{
    EstimateJob *job = job_of(w);
    auto user = user_lookup_cached(job->peer.uid);
    if (!user) {
        job->outcome = Outcome::unknown_user;
        job->message = user.error().message;
        return;
    }
    job->user = user.value();
    FsIdentity as_user(job->user);
    if (!as_user.ok()) {
        job->outcome = Outcome::cannot_switch_user;
        job->message = "xmem: xmemd cannot take the identity of uid " +
                       std::to_string(job->peer.uid) + " (run xmemd as root)";
        return;
    }
    if (!can_enter(job->req.cwd, job->user)) {
        job->outcome = Outcome::cwd_unusable;
        job->message = "xmem: cannot use the working directory " + job->req.cwd + " as " +
                       job->user.name + ": " + strerror(errno);
        return;
    }
    // The decision names the batch script it was made for (job_submit.lua compares), so the
    // profile must be of what that script runs, not of what the client says it runs.
    auto script = bound_script_read(job->req.script, job->req.wrap, job->req.cwd);
    if (!script) {
        job->outcome = Outcome::script_unreadable;
        job->message = script.error().message;
        return;
    }
    if (auto why = bound_script_mismatch(script.value(), job->req.argv, job->req.preamble)) {
        job->outcome = Outcome::script_mismatch;
        job->message = *why;
        return;
    }
    job->script_sha256 = script.value().sha256;
    KeyInputs in;
    in.uid = job->peer.uid;
    in.argv = job->req.argv;
    in.cwd = job->req.cwd;
    for (const auto &[k, v] : job->req.env)
        in.env[k] = v;
    for (const auto &l : job->req.preamble)
        in.preamble.emplace_back(l.line, l.text);
    in.preamble_changes_dir = preamble_changes_directory(job->req.preamble);
    in.gpu = job->gpu;
    in.torch = job->req.torch.empty() ? job->cfg->torch : job->req.torch;
    in.steps = job->steps;
    in.config_fingerprint = job->cfg->fingerprint;
    auto key = cache_key(in);
    if (!key) {
        job->outcome = Outcome::script_unreadable;
        job->message = key.error().message;
        return;
    }
    job->key = key.value();
    job->outcome = Outcome::estimated; // provisional: prepared
    // A hit is signed right here: one thread hop fewer on the hot path.
    Estimate hit;
    if (job->d->cache().get(job->key, time(nullptr), &hit)) {
        job->est = hit;
        job->cached = true;
        job->outcome = hit.fits ? Outcome::estimated : Outcome::exceeds_gpu;
        sign(job);
    }
}

// ---- worker: run the profiler in the sandbox
void work_profile(uv_work_t *w)
{
    EstimateJob *job = job_of(w);
    const Config &cfg = *job->cfg;
    SandboxSpec spec;
    spec.user = job->user;
    spec.cwd = job->req.cwd;
    std::string torch = job->req.torch.empty() ? cfg.torch : job->req.torch;
    spec.argv = estimator_argv(cfg.estimator, job->gpu, torch, job->steps, job->req.argv);
    spec.env = sandbox_environment(job->user, job->req.env);
    spec.limits = cfg.limits;
    int64_t left = (int64_t)job->deadline_ms - (int64_t)job->started_ms;
    spec.wall_ms =
        (int)std::max<int64_t>(1, std::min<int64_t>(cfg.limits.wall_seconds * 1000LL, left));
    job->run = run_with_preamble(spec, job->req.preamble, &job->cancel);
    if (auto failed = preamble_failure(job->run, job->req.preamble)) {
        job->outcome = Outcome::preamble_failed;
        job->message = *failed;
        return;
    }
    ProfileVerdict v = profile_verdict(job->run, cfg.limits);
    job->outcome = v.outcome;
    job->message = v.message;
    job->est = v.estimate;
}

// Signs a successful estimate (worker thread): the user's message line and the decision.
void sign(EstimateJob *job)
{
    const Config &cfg = *job->cfg;
    job->message = "xmem: peak " + gib(job->est.peak_bytes) + ", limit " +
                   gib(job->est.limit_bytes) + " on " + job->est.gpu +
                   (job->cached ? " (cached)" : "") +
                   (job->outcome == Outcome::exceeds_gpu ? "; does not fit this GPU" : "");
    Decision dec;
    dec.uid = job->peer.uid;
    dec.request_id = job->id;
    dec.peak_bytes = job->est.peak_bytes;
    dec.limit_bytes = job->est.limit_bytes;
    dec.gpu = job->est.gpu;
    dec.script_sha256 = job->script_sha256;
    // The directory is bound as the path the profile's chdir used, not its realpath: the job's
    // work_dir is the same string (sbatch's --chdir or getcwd), which job_submit.lua cannot
    // resolve, and a path that changes meaning in between is the user's own doing, like an
    // edited big.py.
    dec.dir_sha256 = sha256_hex(job->req.cwd);
    dec.gres = job->req.gres;
    // What the profile ran with (the cache key hashes the same variables, so a hit agrees).
    dec.env_sha256 = sha256_hex(request_env_text(job->req.env));
    dec.expires = time(nullptr) + cfg.policy.decision_ttl_seconds;
    auto cred =
        munge_sign(decision_payload(dec), cfg.munge_socket, cfg.policy.decision_ttl_seconds);
    if (!cred) {
        job->outcome = Outcome::sign_failed;
        job->message =
            "xmem: estimated, but the decision could not be signed: " + cred.error().message;
        log_warn_throttled("munge", "%s", cred.error().message.c_str());
        return;
    }
    job->decision = cred.value();
}

void work_sign(uv_work_t *w)
{
    sign(job_of(w));
}

// Every estimate work item goes on the pool through here, and its after-callback calls
// left_pool first, so Daemon::pool_idle() counts the threads free.
void queue_on_pool(EstimateJob *job, uv_work_cb work, uv_after_work_cb after)
{
    job->d->pool_take();
    job->work.data = job;
    uv_queue_work(job->d->loop(), &job->work, work, after);
}

void left_pool(EstimateJob *job)
{
    job->d->pool_give();
}

// Puts the job's preparation on the threadpool, or in line behind its user's others when the
// user has k_max_preparing_per_user there already and the pool has no thread to spare beyond
// the reserve for other users (finding 8).
void begin_prepare(EstimateJob *job)
{
    if (!job->d->prepare_line().enter(job->peer.uid, job, job->d->pool_idle())) {
        job->waiting_to_prepare = true;
        return;
    }
    queue_on_pool(job, work_prepare, after_prepare);
}

// The user's preparation ended: the next of theirs that waits takes its place. One whose
// client left meanwhile was already taken out of line (abandon).
void end_prepare(EstimateJob *job)
{
    EstimateJob *next = job->d->prepare_line().end(job->peer.uid);
    if (!next)
        return;
    next->waiting_to_prepare = false;
    begin_prepare(next);
}

// Takes a job that waits to prepare out of its user's line; false when it is not in line.
bool leave_prepare_line(EstimateJob *job)
{
    if (!job->waiting_to_prepare)
        return false;
    job->d->prepare_line().leave(job->peer.uid, job);
    job->waiting_to_prepare = false;
    job->preparing = false;
    return true;
}

void after_prepare(uv_work_t *w, int status)
{
    EstimateJob *job = job_of(w);
    Daemon *d = job->d;
    left_pool(job);
    job->preparing = false;
    end_prepare(job);
    if (status == UV_ECANCELED)
        return fail_job(job, Outcome::shutting_down, "xmem: xmemd is shutting down");
    if (job->cached) {
        d->metrics().cache_hit();
        return record(job);
    }
    if (job->outcome != Outcome::estimated)
        return record(job);
    if (job->abandoned)
        return fail_job(job, Outcome::client_gone, client_gone_message());
    if (EstimateJob *leader = d->leaders().find(job->key)) {
        job->leader = leader;
        leader->followers.push_back(job);
        return;
    }
    schedule_profile(job);
}

// A cache miss that leads: it profiles, and identical requests arriving meanwhile follow.
void schedule_profile(EstimateJob *job)
{
    Daemon *d = job->d;
    d->leaders().lead(job->key, job); // first: a refusal below hands its followers on
    d->metrics().cache_miss();        // a miss is a request that profiles for itself
    if (d->draining())
        return fail_job(job, Outcome::shutting_down, "xmem: xmemd is shutting down");
    EstimateJob *evicted = nullptr;
    Scheduler::Admit admit = d->scheduler().submit(job, job->peer.uid, &evicted);
    if (evicted)
        fail_job(evicted, Outcome::busy,
                 "xmem: xmemd is busy (" + std::to_string(d->scheduler().queued()) +
                     " estimates queued, yours the most); retry in a minute");
    switch (admit) {
    case Scheduler::Admit::start_now:
        estimate_start_profile(job);
        return;
    case Scheduler::Admit::queued:
        return;
    case Scheduler::Admit::full:
        return fail_job(job, Outcome::busy,
                        "xmem: xmemd is busy (" + std::to_string(d->scheduler().queued()) +
                            " estimates queued); retry in a minute");
    }
}

void after_profile(uv_work_t *w, int)
{
    EstimateJob *job = job_of(w);
    Daemon *d = job->d;
    left_pool(job);
    job->running = false;
    if (job->abandoned && job->run.cancelled) {
        job->outcome = Outcome::client_gone;
        job->message = client_gone_message();
    }
    d->metrics().profile_seconds.observe(job->run.wall_seconds);
    if (outcome_is_answered(job->outcome)) {
        d->metrics().analyze_seconds.observe(job->est.analyze_seconds);
        if (job->est.gpu_memory_bytes == 0)
            job->est.gpu_memory_bytes = policy_gpu_bytes(job->cfg->policy, job->est.gpu);
        // Only a config still current may fill the cache (a reload clears it).
        if (job->cfg == d->config())
            d->cache().put(job->key, job->est, time(nullptr));
    }
    for (EstimateJob *next : d->scheduler().finish(job->peer.uid))
        estimate_start_profile(next);
    record(job);
}

// REDACTED: for the ledger, without secret values (redact.h); the reply shows the user's
// own lines as they are.
nlohmann::json script_lines_json(const std::vector<ScriptLine> &lines, bool redacted = false)
{
    nlohmann::json a = nlohmann::json::array();
    for (const auto &l : lines)
        a.push_back({{"line", l.line}, {"text", redacted ? redact_text(l.text) : l.text}});
    return a;
}

nlohmann::json reply_body(const EstimateJob *job)
{
    nlohmann::json r = outcome_reply(job->outcome, job->message);
    r["request_id"] = job->id;
    r["entrypoint"] = joined_argv(job->req.argv);
    if (!job->req.skipped.empty())
        r["preamble_skipped"] = script_lines_json(job->req.skipped);
    if (outcome_is_answered(job->outcome) || job->outcome == Outcome::sign_failed) {
        const Estimate &e = job->est;
        r["cached"] = job->cached;
        r["peak_bytes"] = e.peak_bytes;
        r["limit_bytes"] = e.limit_bytes;
        r["gpu_memory_bytes"] = e.gpu_memory_bytes;
        r["fits"] = e.fits;
        r["gpu"] = e.gpu;
        r["torch"] = e.torch;
        r["mode"] = e.mode;
        r["profile_seconds"] = e.profile_seconds;
        r["analyze_seconds"] = e.analyze_seconds;
        r["breakdown"] = e.breakdown ? *e.breakdown : nlohmann::json::object();
        r["decision"] = job->decision;
    }
    return r;
}

RequestRow ledger_row(const EstimateJob *job, uint64_t now_ms)
{
    RequestRow row;
    row.id = job->id;
    row.ts = time(nullptr);
    row.kind = "estimate";
    row.user = job->user.name;
    row.uid = job->peer.uid;
    row.gid = job->peer.gid;
    row.pid = job->peer.pid;
    row.cwd = job->req.cwd;
    row.entrypoint = redact_argv(job->req.argv); // stored: no secret values (redact.h)
    row.script = job->req.script;
    nlohmann::json opt = {{"gpu", job->gpu},
                          {"partition", job->req.partition},
                          {"torch", job->req.torch},
                          {"steps", job->steps},
                          {"check_only", job->req.check_only},
                          {"deadline_ms", job->req.deadline_ms}};
    for (const auto &[k, v] : job->req.env)
        opt["env"][k] = redact_text(v);
    if (!job->req.preamble.empty())
        opt["preamble"] = script_lines_json(job->req.preamble, true);
    if (!job->req.skipped.empty())
        opt["preamble_skipped"] = script_lines_json(job->req.skipped, true);
    row.options = opt.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    row.outcome = job->outcome;
    row.cached = job->cached;
    row.queue_ms = job->started_ms ? (int64_t)(job->started_ms - job->received_ms) : 0;
    row.profile_ms = (int64_t)(job->run.wall_seconds * 1000);
    row.total_ms = (int64_t)(now_ms - job->received_ms);
    row.cache_key = job->key;
    row.message = job->message;
    if (outcome_is_answered(job->outcome) || job->outcome == Outcome::sign_failed) {
        row.peak_bytes = job->est.peak_bytes;
        row.limit_bytes = job->est.limit_bytes;
        row.fits = job->est.fits;
        row.gpu = job->est.gpu;
        row.torch = job->est.torch;
        row.analyze_seconds = job->est.analyze_seconds;
        row.breakdown = job->est.breakdown_json;
        row.mode = job->est.mode;
    }
    return row;
}

void commit_and_answer(EstimateJob *job)
{
    Daemon *d = job->d;
    d->ledger().append(ledger_row(job, uv_now(d->loop())), [job, d](bool ok) {
        if (!ok) {
            job->outcome = Outcome::internal_error;
            job->message = "xmem: the ledger could not record the request (see the xmemd log)";
            job->decision.clear();
        }
        d->metrics().count_outcome(job->outcome);
        d->metrics().request_seconds.observe((uv_now(d->loop()) - job->received_ms) / 1000.0);
        if (job->conn) {
            job->conn->job = nullptr;
            conn_reply(job->conn, reply_body(job));
        }
        release_load(job);
        d->jobs().erase(job);
        delete job;
        d->maybe_finish_drain();
    });
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
    Daemon *d = leader->d;
    if (!d->leaders().step_down(leader->key, leader))
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
            d->metrics().cache_hit();
        record(f);
    }
}

// Every path ends here: sign a success (unless done already), commit, answer.
void record(EstimateJob *job)
{
    release_followers(job);
    if (outcome_is_answered(job->outcome) && job->decision.empty()) {
        job->work.data = job;
        queue_on_pool(job, work_sign, [](uv_work_t *w, int) {
            left_pool(job_of(w));
            commit_and_answer(job_of(w));
        });
        return;
    }
    commit_and_answer(job);
}

} // namespace

void estimate_begin(Conn *c, const nlohmann::json &body)
{
    Daemon *d = c->d;
    auto *job = new EstimateJob;
    job->d = d;
    job->conn = c;
    job->peer = c->peer;
    job->cfg = d->config();
    job->received_ms = uv_now(d->loop());
    job->id = d->ledger().take_id(); // every estimate gets its row, whatever the outcome
    c->job = job;
    d->jobs().insert(job);
    auto req = estimate_parse(body);
    if (!req.ok())
        return fail_job(job, Outcome::bad_request, req.error().message);
    job->req = std::move(req).value();
    auto load = take_load(job);
    if (!load.ok())
        return fail_job(job, Outcome::too_many_in_flight, load.error().message);
    const Config &cfg = *job->cfg;
    int deadline = job->req.deadline_ms > 0 ? job->req.deadline_ms : k_default_deadline_ms;
    job->deadline_ms = job->received_ms + (uint64_t)std::min(deadline, k_max_deadline_ms);
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
    job->preparing = true;
    begin_prepare(job);
}

void estimate_start_profile(EstimateJob *job)
{
    Daemon *d = job->d;
    job->started_ms = uv_now(d->loop());
    if (job->started_ms >= job->deadline_ms) {
        for (EstimateJob *next : d->scheduler().finish(job->peer.uid))
            estimate_start_profile(next);
        return fail_job(job, Outcome::deadline_expired,
                        "xmem: the request's deadline passed while it waited for a profiling "
                        "slot (raise the deadline or retry)");
    }
    job->running = true;
    queue_on_pool(job, work_profile, after_profile);
}

void estimate_refuse_queued(EstimateJob *job, Outcome o, const std::string &message)
{
    fail_job(job, o, message);
}

void estimate_cancel_running(Daemon *d)
{
    for (EstimateJob *job : d->jobs())
        job->cancel = true;
}

void estimate_forget_conn(EstimateJob *job)
{
    job->conn = nullptr;
    abandon(job);
}

void estimate_sweep_deadlines(Daemon *d)
{
    uint64_t now = uv_now(d->loop());
    std::vector<EstimateJob *> expired;
    for (EstimateJob *job : d->jobs()) {
        if (job->running || job->started_ms || !job->deadline_ms || now < job->deadline_ms)
            continue;
        if (job->leader) { // waits for an identical profile: stop waiting (below)
            expired.push_back(job);
        } else if (d->scheduler().remove(job)) {
            expired.push_back(job);
        }
    }
    std::vector<EstimateJob *> left_alone; // leaders whose last follower just expired
    for (EstimateJob *job : expired) {
        EstimateJob *leader = job->leader;
        if (leader) {
            auto &f = leader->followers;
            f.erase(std::remove(f.begin(), f.end(), job), f.end());
            job->leader = nullptr;
            if (!has_waiter(leader))
                left_alone.push_back(leader);
        }
        fail_job(job, Outcome::deadline_expired,
                 "xmem: the request's deadline passed while it waited for a profiling slot");
    }
    for (EstimateJob *leader : left_alone)
        if (d->jobs().count(leader) && leader->abandoned)
            abandon(leader);
}

namespace
{

const char *job_state(const EstimateJob *job)
{
    return job->running     ? "profiling"
           : job->leader    ? "waiting for an identical profile"
           : job->preparing ? "preparing"
                            : "queued";
}

} // namespace

nlohmann::json estimate_in_flight(const Daemon *d)
{
    nlohmann::json a = nlohmann::json::array();
    uint64_t now = uv_now(const_cast<Daemon *>(d)->loop());
    struct Rest {
        std::string user;
        int count = 0;
        double oldest = 0;
    };
    std::map<uid_t, Rest> rest;
    for (const EstimateJob *job : const_cast<Daemon *>(d)->jobs()) {
        double seconds = (now - job->received_ms) / 1000.0;
        if ((int)a.size() < k_status_max_entries) {
            // job->user is written by the prepare worker: not read until it is done.
            a.push_back({{"user", job->preparing ? "" : job->user.name},
                         {"uid", job->peer.uid},
                         {"state", job_state(job)},
                         {"entrypoint", shown_argv(job->req.argv)},
                         {"seconds", seconds}});
            continue;
        }
        Rest &r = rest[job->peer.uid];
        if (!job->preparing)
            r.user = job->user.name;
        r.count++;
        r.oldest = std::max(r.oldest, seconds);
    }
    for (const auto &[uid, r] : rest)
        a.push_back({{"user", r.user},
                     {"uid", uid},
                     {"state", std::to_string(r.count) + " more"},
                     {"entrypoint", ""},
                     {"count", r.count},
                     {"seconds", r.oldest}});
    return a;
}

} // namespace xmem::server
