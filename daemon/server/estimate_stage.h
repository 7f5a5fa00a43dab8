// estimate_stage.h — the estimate request's life as one state machine: where a job is
// (Stage), what happens to it (Event), and what the request must do about it (Action).
// estimate_step() is the only place that knows which event may move a job from which stage;
// everything else asks it (estimate_request.cpp: advance()). Pure: no job, no socket, no loop,
// so every transition is unit-tested (tests/unit/daemon/test_estimate_stage.cpp).
//
//   received ─┬─ wait_in_line ──→ in_line ── prepare ─┐
//             └─ prepare ─────────────────────────────┴→ preparing
//   preparing ─┬─ follow ──→ following ──────────┐ (the leader failed for its own reasons:
//              ├─ queue ───→ queued               │  the first follower leads, queue or
//              └─ start_profile → profiling  ←────┘  start_profile)
//   queued ── start_profile ──→ profiling
//   following | profiling ── sign ──→ signing          (a success; a cache hit is signed
//   every stage before committing ── commit ──→ committing   while it is prepared)
//   committing ── answered ──→ done                    (the row is written; the job is freed)
//
// abandon: nobody waits for the answer any more (the client left and no follower waits).
// expire: the request's deadline passed. cancel: xmemd stops its running profiles (drain).
// Each may come at any live stage; the Action says what it means there.
#ifndef XMEMD_ESTIMATE_STAGE_H
#define XMEMD_ESTIMATE_STAGE_H

#include <optional>

namespace xmem::server
{

enum class Stage {
    received,   // being checked on the loop thread (estimate_begin)
    in_line,    // waits in its user's prepare line (prepare_line.h)
    preparing,  // work_prepare on the threadpool: user, cwd, script, cache key (or a hit)
    following,  // waits for an identical request's profile (leaders.h)
    queued,     // leads its cache key and waits for a profiling slot (scheduler.h)
    profiling,  // work_profile on the threadpool, in the sandbox
    signing,    // work_sign on the threadpool: the user's message line and the decision
    committing, // its ledger row is being written; then it is answered
    done,       // answered (or recorded without an answer) and about to be freed
};

enum class Event {
    wait_in_line,  // the user's preparations fill their share of the pool
    prepare,       // the preparation goes on the threadpool
    follow,        // prepared; an identical request already leads
    queue,         // leads; no profiling slot free yet
    start_profile, // leads and has a slot
    sign,          // a success to sign
    commit,        // the outcome is final: write the row
    answered,      // the row is written and the answer sent
    abandon,       // nobody waits for the answer any more
    expire,        // the deadline passed
    cancel,        // xmemd stops the profiles it runs (second signal, drain timeout)
};

// What the caller does besides moving the job to the next stage.
enum class Action {
    none,           // nothing now (a step in flight on the pool will see the change)
    leave_line,     // take the job out of its user's prepare line, then end it
    stop_following, // take it off its leader's followers, then end it
    leave_queue,    // take it out of the scheduler's queue, then end it
    kill_profile,   // stop the sandbox run; after_profile records it
};

struct Step {
    Stage next;
    Action action = Action::none;
};

// The stage after `event` at `stage`, and what to do; nullopt when the event cannot happen
// there (a bug: the caller refuses it and keeps the stage).
std::optional<Step> estimate_step(Stage stage, Event event);

const char *stage_name(Stage s);
const char *event_name(Event e);

// Whether a worker may still write the job's prepared fields (user, key): the loop thread
// reads them only once it is past these stages.
bool stage_before_prepared(Stage s);

} // namespace xmem::server
#endif
