// verdict.cpp — turn a sandboxed run into an outcome. Limits are recognised by the signal
// the kernel sends (SIGXCPU, SIGXFSZ), by the daemon's own bookkeeping (wall time, output),
// and — for limits that surface as ordinary errors in the child (address space: ENOMEM /
// MemoryError; processes: EAGAIN from fork) — by the estimator's exit status, which the
// process that saw the error chose (daemon/contract/profile_status.h,
// docs/profile-status.md). stderr is read only for a process that died before it could say.
#include "verdict.h"
#include "contract/profile_status.h"
#include "defaults.h"
#include "json_fields.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <csignal>
#include <cstring>

namespace xmem::server
{

namespace
{

bool contains(const std::string &s, const char *needle)
{
    return s.find(needle) != s.npos;
}

// Last line(s) of stderr, flattened to one line for the user.
std::string tail(const std::string &err)
{
    std::string t =
        err.size() > k_message_tail_bytes ? err.substr(err.size() - k_message_tail_bytes) : err;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' '))
        t.pop_back();
    for (char &c : t)
        if (c == '\n' || c == '\r' || c == '\t')
            c = ' ';
    return t.empty() ? "" : " | stderr: " + t;
}

Outcome classify_failure(const SandboxRun &r, const SandboxLimits &lim)
{
    if (r.wall_expired)
        return Outcome::profile_timeout;
    if (r.output_overflow)
        return Outcome::profile_output_too_large;
    if (r.term_signal == SIGXCPU ||
        (r.term_signal == SIGKILL && r.cpu_seconds >= lim.cpu_seconds - 0.5))
        return Outcome::profile_cpu_limit;
    // A shell reports a child killed by signal N as exit status 128+N.
    if (r.term_signal == SIGXFSZ || r.exit_status == 128 + SIGXFSZ ||
        contains(r.err, "File size limit exceeded"))
        return Outcome::profile_file_limit;
    if (r.exit_status == 128 + SIGXCPU)
        return Outcome::profile_cpu_limit;
    // The capture saw MemoryError or EAGAIN (its status line), or the launcher or
    // xmem-estimate saw ENOMEM or EAGAIN themselves: each exits with the limit's status.
    if (r.exit_status == XMEM_PROFILE_EXIT_NO_MEMORY)
        return Outcome::profile_memory_limit;
    if (r.exit_status == XMEM_PROFILE_EXIT_NO_PROCESSES)
        return Outcome::profile_process_limit;
    // Fallback, for a process that dies of the limit before anything can write a status
    // line or choose an exit status: the interpreter or `import torch` before the capture
    // has armed its hook, or a configured estimator that is not xmem-estimate and runs the
    // job bare (the estimator key takes any command). Only their stderr says what happened.
    if (contains(r.err, "MemoryError") || contains(r.err, "annot allocate memory") ||
        contains(r.err, "cannot allocate") || contains(r.err, "bad_alloc") ||
        contains(r.err, "out of memory"))
        return Outcome::profile_memory_limit;
    // EAGAIN from fork/clone/pthread_create under RLIMIT_NPROC.
    if (contains(r.err, "Resource temporarily unavailable") &&
        (contains(r.err, "fork") || contains(r.err, "BlockingIOError") ||
         contains(r.err, "thread")))
        return Outcome::profile_process_limit;
    return Outcome::profile_failed;
}

std::string limit_hint(Outcome o, const SandboxRun &r, const SandboxLimits &lim)
{
    switch (o) {
    case Outcome::profile_timeout:
        return "xmem: profile stopped after " + std::to_string((int)r.wall_seconds) +
               " s of wall time (limit " + std::to_string(lim.wall_seconds) +
               " s or the request deadline); profile fewer steps or a smaller input";
    case Outcome::profile_cpu_limit:
        return "xmem: profile used its CPU-time limit of " + std::to_string(lim.cpu_seconds) +
               " s; profile fewer steps";
    case Outcome::profile_memory_limit:
        return "xmem: profile ran out of its " + std::to_string(lim.address_space_mb) +
               " MiB address-space limit; use a smaller batch for the estimate";
    case Outcome::profile_process_limit:
        return "xmem: profile hit its limit of " + std::to_string(lim.processes) +
               " processes; set DataLoader num_workers=0 for the estimate";
    case Outcome::profile_file_limit:
        return "xmem: profile wrote a file larger than " + std::to_string(lim.file_size_mb) +
               " MiB; do not write checkpoints or logs while estimating";
    case Outcome::profile_output_too_large:
        return "xmem: the estimator printed more than " + std::to_string(lim.output_kb) +
               " KiB on stdout; only the JSON result may go there";
    default:
        if (r.term_signal)
            return "xmem: the estimator was killed by signal " + std::to_string(r.term_signal) +
                   " (" + strsignal(r.term_signal) + ")";
        return "xmem: the estimator failed with exit status " + std::to_string(r.exit_status);
    }
}

} // namespace

std::vector<std::string> estimator_argv(const std::vector<std::string> &estimator,
                                        const std::string &gpu, const std::string &torch, int steps,
                                        const std::vector<std::string> &entry, long world_size)
{
    std::vector<std::string> a = estimator;
    if (!gpu.empty()) {
        a.push_back("--gpu");
        a.push_back(gpu);
    }
    if (!torch.empty()) {
        a.push_back("--torch");
        a.push_back(torch);
    }
    a.push_back("--steps");
    a.push_back(std::to_string(steps));
    if (world_size > 1) {
        a.push_back("--world-size");
        a.push_back(std::to_string(world_size));
    }
    a.push_back("--");
    a.insert(a.end(), entry.begin(), entry.end());
    return a;
}

bool gpu_name_valid(const std::string &gpu)
{
    if (gpu.empty() || gpu.size() > k_gpu_name_max_bytes || gpu.front() == ' ' ||
        gpu.back() == ' ' || gpu.find("  ") != gpu.npos)
        return false;
    for (unsigned char ch : gpu)
        if (!isalnum(ch) && ch != '-' && ch != '_' && ch != '.' && ch != ' ')
            return false;
    return true;
}

Result<Estimate> parse_estimate(const std::string &text)
{
    if (text.size() > k_profile_json_max_bytes)
        return Result<Estimate>::fail("larger than " + std::to_string(k_profile_json_max_bytes) +
                                      " bytes");
    if (!json_depth_within(text, k_json_max_depth))
        return Result<Estimate>::fail("nested deeper than " + std::to_string(k_json_max_depth) +
                                      " levels");
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return Result<Estimate>::fail("not a JSON object");
    Fields f(j);
    Estimate e;
    e.peak_bytes = f.u64("peak_bytes");
    e.limit_bytes = f.u64("limit_bytes");
    e.fits = f.flag("fits");
    e.gpu = f.text("gpu");
    const nlohmann::json *torch = f.get("torch", "a string or null");
    e.torch = torch && torch->is_string() ? torch->get<std::string>() : "";
    e.mode = f.text("mode");
    e.profile_seconds = f.real("profile_seconds");
    e.analyze_seconds = f.real("analyze_seconds");
    if (const nlohmann::json *breakdown = f.get("breakdown", "an object")) {
        e.breakdown_json =
            breakdown->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        e.breakdown = std::make_shared<const nlohmann::json>(*breakdown);
    }
    if (j.contains("gpu_memory_bytes"))
        e.gpu_memory_bytes = f.u64("gpu_memory_bytes");
    if (!f.error().empty())
        return Result<Estimate>::fail(f.error());
    if (!gpu_name_valid(e.gpu))
        return Result<Estimate>::fail("gpu: expected a GPU name (letters, digits, - _ . and "
                                      "single spaces, at most " +
                                      std::to_string(k_gpu_name_max_bytes) + " bytes)");
    return Result<Estimate>::ok(std::move(e));
}

ProfileVerdict profile_verdict(const SandboxRun &r, const SandboxLimits &lim)
{
    ProfileVerdict v;
    if (!r.spawned) {
        v.outcome = Outcome::spawn_failed;
        v.message = "xmem: could not start the estimator: " + r.spawn_error +
                    " (check the estimator key in xmem.yaml)";
        return v;
    }
    if (r.cancelled) {
        v.outcome = Outcome::shutting_down;
        v.message = "xmem: xmemd is shutting down; the profile was stopped (retry shortly)";
        return v;
    }
    if (r.wall_expired || r.output_overflow || r.term_signal != 0 || r.exit_status != 0) {
        v.outcome = classify_failure(r, lim);
        v.message = limit_hint(v.outcome, r, lim) + tail(r.err);
        return v;
    }
    auto estimate = parse_estimate(r.out);
    if (!estimate.ok()) {
        v.outcome = Outcome::profile_bad_output;
        v.message = "xmem: the estimator's output is not the expected JSON (" +
                    estimate.error().message + ")" + tail(r.err);
        return v;
    }
    v.estimate = std::move(estimate).value();
    v.outcome = v.estimate.fits ? Outcome::estimated : Outcome::exceeds_gpu;
    v.message = "";
    return v;
}

} // namespace xmem::server
