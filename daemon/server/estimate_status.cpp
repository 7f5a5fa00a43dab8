// estimate_status.cpp — the requests in flight as `xmem status` lists them (daemon.h:
// estimate_in_flight): what each is doing, named by its stage, and a bounded reply.
#include "bound_script.h"
#include "defaults.h"
#include "estimate_steps.h"

#include <algorithm>
#include <map>

namespace xmem::server
{

namespace
{

// The words `xmem status` has always shown. A job being signed or committed is listed as
// queued, as before the stages were named: it waits for nothing but its own last steps.
const char *job_state(Stage s)
{
    switch (s) {
    case Stage::profiling:
        return "profiling";
    case Stage::following:
        return "waiting for an identical profile";
    case Stage::received:
    case Stage::in_line:
    case Stage::preparing:
        return "preparing";
    case Stage::queued:
    case Stage::signing:
    case Stage::committing:
    case Stage::done:
        return "queued";
    }
    return "queued";
}

} // namespace

nlohmann::json estimate_held_for(const EstimateOwners &o, uid_t uid)
{
    nlohmann::json a = nlohmann::json::array();
    uint64_t now = uv_now(o.loop);
    for (const EstimateJob *job : o.jobs) {
        if (!job->held || job->peer.uid != uid || (int)a.size() >= k_status_max_entries)
            continue;
        a.push_back({{"request_id", job->id},
                     {"state", job_state(job->stage)},
                     {"seconds", (now - job->received_ms) / 1000.0},
                     {"entrypoint", shown_argv(job->req.argv)}});
    }
    return a;
}

nlohmann::json estimate_in_flight(const EstimateOwners &o)
{
    nlohmann::json a = nlohmann::json::array();
    uint64_t now = uv_now(o.loop);
    struct Rest {
        std::string user;
        int count = 0;
        double oldest = 0;
    };
    std::map<uid_t, Rest> rest;
    for (const EstimateJob *job : o.jobs) {
        double seconds = (now - job->received_ms) / 1000.0;
        if ((int)a.size() < k_status_max_entries) {
            // job->user is written by the prepare worker: not read until it is done.
            a.push_back({{"user", stage_before_prepared(job->stage) ? "" : job->user.name},
                         {"uid", job->peer.uid},
                         {"state", job_state(job->stage)},
                         {"entrypoint", shown_argv(job->req.argv)},
                         {"seconds", seconds},
                         {"request_id", job->id},
                         {"held", job->held}}); // its job waits in Slurm (docs/async.md)
            continue;
        }
        Rest &r = rest[job->peer.uid];
        if (!stage_before_prepared(job->stage))
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
