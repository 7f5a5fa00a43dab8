// estimate_steps.h — the estimate request's steps, shared by its files (and by nothing else):
//   estimate_request.cpp    the life on the loop thread: begin, prepare, lead or follow,
//                           schedule, profile, record; advance() moves the stage
//   estimate_work.cpp       the three blocking steps on the threadpool: prepare, profile, sign
//   estimate_deadlines.cpp  the request's deadline: set, checked at start, swept
//   estimate_reply.cpp      the ledger row and the answer, then the job is freed
//   estimate_status.cpp     the listing for `xmem status`
// Loop-thread steps are plain functions; the worker steps touch only their job.
#ifndef XMEMD_ESTIMATE_STEPS_H
#define XMEMD_ESTIMATE_STEPS_H

#include "estimate_job.h"

#include <string>

namespace xmem::server
{

// Moves the job on by `event` (estimate_step) and returns what to do there. An event its
// stage cannot take is a bug: it is logged and refused here, the one place, and the job keeps
// its stage (Action::none).
Action advance(EstimateJob *job, Event event);

// Every path ends here: sign a success (unless done already), commit, answer.
void record(EstimateJob *job);
void fail_job(EstimateJob *job, Outcome o, std::string message);
// Nobody waits for the job's answer any more: end its work (estimate_request.cpp).
void abandon(EstimateJob *job);
// Takes a follower off its leader's followers; true when the leader is left with nobody
// waiting for it.
bool stop_following(EstimateJob *job);

std::string client_gone_message();

// Every estimate work item goes on the pool through here, and its after-callback calls
// left_pool first, so owners->pool counts the threads free.
void queue_on_pool(EstimateJob *job, uv_work_cb work, uv_after_work_cb after);
void left_pool(EstimateJob *job);
inline EstimateJob *job_of(uv_work_t *w)
{
    return static_cast<EstimateJob *>(w->data);
}

// estimate_work.cpp: on the threadpool.
void work_prepare(uv_work_t *w);
void work_profile(uv_work_t *w);
void work_sign(uv_work_t *w);

// estimate_deadlines.cpp
// The loop time by which the request must have started its profile.
uint64_t deadline_of(const EstimateRequest &req, uint64_t received_ms);
// True (and the job refused deadline_expired) when its deadline passed before its profile
// could start.
bool refuse_if_late(EstimateJob *job, uint64_t now_ms);

// estimate_reply.cpp: writes the row, answers the client if it still waits, frees the job.
void commit_and_answer(EstimateJob *job);

} // namespace xmem::server
#endif
