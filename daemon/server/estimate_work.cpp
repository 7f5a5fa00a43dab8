/*
 * estimate_work.cpp — the estimate request's three blocking steps, on the libuv threadpool:
 * prepare (who is asking, can they use the directory, which script, what cache key), profile
 * (the estimator in the sandbox) and sign. Each touches only its own job; the loop thread
 * reads what they wrote once their after-callback runs (estimate_request.cpp).
 */
#include "bound_script.h"
#include "cache_key.h"
#include "estimate_steps.h"
#include "log.h"
#include "profile_job.h"
#include "sha256.h"
#include "signer.h"
#include "xmem_script.h"

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

std::string gib(uint64_t b)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%.2f GiB", b / 1073741824.0);
    return buf;
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

// The job's ranks: the GPU request the decision is bound to ("gpu:1:nodes:2", parsed by the
// plugin's own code), the entrypoint, which xmemd has checked against the script, and the
// srun in front of it in that script. A request without a GPU request (salloc with --gpus
// unset, an older plugin) is one rank.
long world_size(const EstimateRequest &req, const std::string &script)
{
    xmem_job_shape shape;
    if (req.gres.empty() || xmem_job_shape_parse(req.gres.c_str(), &shape) < 0)
        return 1;
    std::vector<char *> argv;
    for (const auto &a : req.argv)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    long srun = script.empty() ? 0 : xmem_script_srun_tasks(script.c_str(), argv.data());
    return xmem_world_size(&shape, argv.data(), srun);
}

} // namespace

static void sign(EstimateJob *job);

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
    job->world = world_size(job->req, script.value().text);
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
    in.world = job->world;
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
    if (job->owners->cache.get(job->key, time(nullptr), &hit)) {
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
    spec.limits = cfg.limits;
    int64_t left = (int64_t)job->deadline_ms - (int64_t)job->started_ms;
    spec.wall_ms =
        (int)std::max<int64_t>(1, std::min<int64_t>(cfg.limits.wall_seconds * 1000LL, left));
    std::vector<std::string> estimator = cfg.estimator;
    for (auto &opt : profile_job_options(cfg.profile_job, spec.wall_ms, job->id))
        estimator.push_back(opt);
    spec.argv = estimator_argv(estimator, job->gpu, torch, job->steps, job->req.argv, job->world);
    spec.env = sandbox_environment(job->user, job->req.env);
    profile_job_environment(cfg.profile_job, spec.env);
    job->run = run_with_preamble(spec, job->req.preamble, &job->cancel);
    profile_job_settle(cfg.profile_job, job->id, job->user.uid, job->run);
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
static void sign(EstimateJob *job)
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
    dec.ranks = job->world;
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
    job->signed_fields = dec;
}

void work_sign(uv_work_t *w)
{
    sign(job_of(w));
}

} // namespace xmem::server
