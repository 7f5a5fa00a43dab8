// estimate_job.h — one estimate request on its way through the pipeline (estimate.cpp):
// validate → prepare (worker: user, cwd, cache key) → cache or schedule → profile (worker)
// → sign (worker) → ledger commit → reply.
#ifndef XMEMD_ESTIMATE_JOB_H
#define XMEMD_ESTIMATE_JOB_H

#include "daemon.h"
#include "preamble.h"
#include "verdict.h"
#include "user.h"

#include <atomic>
#include <string>
#include <utility>
#include <vector>

namespace xmem::server
{

struct EstimateRequest {
    std::vector<std::string> argv;
    std::string cwd, script, gpu, partition, torch;
    std::string wrap; // sbatch --wrap's command: the script sbatch builds from it is bound
    std::string gres; // the job's GPU request, canonical ("gpu:1", "gpu:a100:1"): signed
    std::vector<std::pair<std::string, std::string>> env; // relevant variables, by name
    std::vector<ScriptLine> preamble; // the batch script's environment lines, run first
    std::vector<ScriptLine> skipped;  // its lines before the entrypoint that are not run
    int steps = 0;                    // optimizer steps to profile; 0 = the config's
    bool check_only = false;
    int deadline_ms = 0;
};

// Parses and validates a request body; the error is a user-facing message.
Result<EstimateRequest> estimate_parse(const nlohmann::json &j);

struct EstimateJob {
    Daemon *d = nullptr;
    Conn *conn = nullptr;
    Peer peer;
    std::shared_ptr<const Config> cfg; // the config the request started under
    EstimateRequest req;
    std::string gpu; // resolved: request, partition, or site default
    int steps = 0;   // resolved: request or config
    uint64_t received_ms = 0, deadline_ms = 0, started_ms = 0; // loop time (uv_now)
    bool preparing = false; // work_prepare is on the threadpool, or waits in the prepare line
    // In the prepare line (prepare_line.h), not yet on the threadpool.
    bool waiting_to_prepare = false;
    bool running = false;
    // The client left: end the work once no follower waits for it either (finding 3).
    bool abandoned = false;
    uint64_t load_bytes = 0; // counted in Daemon::user_load() while in flight
    bool load_counted = false;
    // Identical requests waiting for this one's profile (it leads; see Daemon::leaders()),
    // or the job this one waits for.
    std::vector<EstimateJob *> followers;
    EstimateJob *leader = nullptr;
    // results
    UserIdentity user;
    std::string key;
    Outcome outcome = Outcome::internal_error;
    std::string message;
    Estimate est;
    bool cached = false;
    uint64_t id = 0;
    std::string decision;
    std::string script_sha256; // of req.script or req.wrap's script (prepare): signed
    SandboxRun run;
    std::atomic<bool> cancel{false};
    uv_work_t work{};
};

} // namespace xmem::server
#endif
