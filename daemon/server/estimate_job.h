// estimate_job.h — one estimate request on its way through the pipeline (estimate_request.cpp):
// validate → prepare (worker: user, cwd, cache key) → cache or schedule → profile (worker)
// → sign (worker) → ledger commit → reply. Its stages: estimate_stage.h.
#ifndef XMEMD_ESTIMATE_JOB_H
#define XMEMD_ESTIMATE_JOB_H

#include "daemon.h"
#include "estimate_stage.h"
#include "preamble.h"
#include "signer.h"
#include "verdict.h"
#include "user.h"

#include <atomic>
#include <optional>
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
    bool async_ok = false; // the client (sbatch) can take outcome pending (docs/async.md)
    int deadline_ms = 0;
};

// Parses and validates a request body; the error is a user-facing message.
Result<EstimateRequest> estimate_parse(const nlohmann::json &j);

struct EstimateJob {
    EstimateOwners *owners = nullptr;
    // Where the job is in its life: moved only by advance() (estimate_stage.h).
    Stage stage = Stage::received;
    // The client that waits for the answer; null once it left (estimate_forget_conn). The job
    // then ends as soon as no follower waits for it either (finding 3).
    Conn *conn = nullptr;
    Peer peer;
    std::shared_ptr<const Config> cfg; // the config the request started under
    EstimateRequest req;
    std::string gpu; // resolved: request, partition, or site default
    int steps = 0;   // resolved: request or config
    long world = 1;  // the job's ranks, from its signed GPU request and entrypoint (prepare)
    uint64_t received_ms = 0, deadline_ms = 0, started_ms = 0; // loop time (uv_now)
    // Bytes counted in owners->user_load while in flight; unset when not counted.
    std::optional<uint64_t> load_bytes;
    // Identical requests waiting for this one's profile (it leads; leaders.h), or the job
    // this one follows.
    std::vector<EstimateJob *> followers;
    EstimateJob *leader = nullptr;
    // results
    UserIdentity user;
    std::string key;
    Outcome outcome = Outcome::internal_error;
    std::string message;
    Estimate est;
    bool cached = false; // answered without a profile of its own: a cache hit, or a leader's
    uint64_t id = 0;
    std::string decision;
    std::optional<Decision> signed_fields; // what `decision` signs; a held job's is signed again
    // sbatch took outcome pending and left: its job waits held in Slurm, and this request goes
    // on for it (estimate_pending.cpp); it ends in the book of held jobs (held_jobs.h).
    bool held = false;
    std::string script_sha256; // of req.script or req.wrap's script (prepare): signed
    SandboxRun run;
    // Tells the sandbox on its worker thread to stop the run: set by a kill_profile action.
    std::atomic<bool> cancel{false};
    uv_work_t work{};
};

} // namespace xmem::server
#endif
