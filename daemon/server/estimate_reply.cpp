// estimate_reply.cpp — how an estimate request ends: its ledger row (secret values redacted),
// then its answer to the client if it still waits, then the job is freed. The row comes first,
// so every answer a user saw is in the ledger.
#include "estimate_steps.h"
#include "held_jobs.h"
#include "redact.h"

#include <ctime>

namespace xmem::server
{

namespace
{

std::string joined_argv(const std::vector<std::string> &argv)
{
    std::string s;
    for (const auto &a : argv)
        s += (s.empty() ? "" : " ") + a;
    return s;
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

// The job's bytes and count leave its user's load (taken in estimate_begin).
void release_load(EstimateJob *job)
{
    if (!job->load_bytes)
        return;
    job->owners->user_load.release(job->peer.uid, *job->load_bytes);
    job->load_bytes.reset();
}

// A held job's estimate ended: the book narrows its Slurm job, or releases it saying why.
void hand_to_held(EstimateJob *job)
{
    HeldJobs &held = *job->owners->held;
    if (outcome_is_answered(job->outcome) && job->signed_fields)
        return held.decided(job->id, *job->signed_fields);
    std::string why = job->message.empty() ? std::string(outcome_text(job->outcome)) : job->message;
    if (why.rfind("xmem: ", 0) == 0) // the job's output line says "xmem: " once
        why.erase(0, 6);
    held.failed(job->id, "no estimate (" + std::string(outcome_name(job->outcome)) + "): " + why +
                             "; the job keeps its original request");
}

} // namespace

void commit_and_answer(EstimateJob *job)
{
    EstimateOwners *o = job->owners;
    advance(job, Event::commit);
    o->ledger->append(ledger_row(job, uv_now(o->loop)), [job, o](bool ok) {
        if (!ok) {
            job->outcome = Outcome::internal_error;
            job->message = "xmem: the ledger could not record the request (see the xmemd log)";
            job->decision.clear();
        }
        o->metrics.count_outcome(job->outcome);
        o->metrics.request_seconds.observe((uv_now(o->loop) - job->received_ms) / 1000.0);
        if (job->conn) {
            job->conn->job = nullptr;
            conn_reply(job->conn, reply_body(job));
        }
        if (job->held)
            hand_to_held(job);
        release_load(job);
        advance(job, Event::answered);
        o->jobs.erase(job);
        delete job;
        o->job_freed();
    });
}

} // namespace xmem::server
