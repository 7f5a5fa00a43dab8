// estimate_stage.cpp — the estimate request's transitions (estimate_stage.h): one switch on
// the event, then on the stage. Anything not listed cannot happen and is refused.
#include "estimate_stage.h"

namespace xmem::server
{

namespace
{

using S = Stage;
using A = Action;

bool waits_to_profile(Stage s)
{
    return s == S::preparing || s == S::following || s == S::queued;
}

// Before the row: the stages a job may be recorded from.
bool live(Stage s)
{
    return s != S::committing && s != S::done;
}

// The client left and no follower waits for the job.
std::optional<Step> on_abandon(Stage s)
{
    switch (s) {
    case S::in_line:
        return Step{s, A::leave_line};
    case S::following:
        return Step{s, A::stop_following};
    case S::queued:
        return Step{s, A::leave_queue};
    case S::profiling:
        return Step{s, A::kill_profile};
    case S::preparing: // after_prepare sees that the client left
    case S::signing:   // the answer is a step away: it is recorded, never sent
    case S::committing:
        return Step{s, A::none};
    case S::received: // checked and recorded in one loop turn: no client can leave meanwhile
    case S::done:
        return std::nullopt;
    }
    return std::nullopt;
}

// The deadline binds only a job that waits for someone else: its leader or a slot.
std::optional<Step> on_expire(Stage s)
{
    switch (s) {
    case S::following:
        return Step{s, A::stop_following};
    case S::queued:
        return Step{s, A::leave_queue};
    case S::in_line:
    case S::preparing:
    case S::profiling:
    case S::signing:
    case S::committing:
        return Step{s, A::none};
    case S::received:
    case S::done:
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<Step> on_cancel(Stage s)
{
    if (s == S::received || s == S::done)
        return std::nullopt;
    return Step{s, s == S::profiling ? A::kill_profile : A::none};
}

std::optional<Step> to(Stage next, bool legal)
{
    return legal ? std::optional<Step>(Step{next, A::none}) : std::nullopt;
}

} // namespace

std::optional<Step> estimate_step(Stage s, Event e)
{
    switch (e) {
    case Event::wait_in_line: // in_line again: the line's head found the pool still taken
        return to(S::in_line, s == S::received || s == S::in_line);
    case Event::prepare:
        return to(S::preparing, s == S::received || s == S::in_line);
    case Event::follow:
        return to(S::following, s == S::preparing);
    case Event::queue: // a follower queues when its leader failed for its own reasons
        return to(S::queued, s == S::preparing || s == S::following);
    case Event::start_profile:
        return to(S::profiling, waits_to_profile(s));
    case Event::sign: // a cache hit is signed while it is prepared, never here
        return to(S::signing, s == S::following || s == S::profiling);
    case Event::commit:
        return to(S::committing, live(s));
    case Event::answered:
        return to(S::done, s == S::committing);
    case Event::abandon:
        return on_abandon(s);
    case Event::expire:
        return on_expire(s);
    case Event::cancel:
        return on_cancel(s);
    }
    return std::nullopt;
}

const char *stage_name(Stage s)
{
    switch (s) {
    case S::received:
        return "received";
    case S::in_line:
        return "in_line";
    case S::preparing:
        return "preparing";
    case S::following:
        return "following";
    case S::queued:
        return "queued";
    case S::profiling:
        return "profiling";
    case S::signing:
        return "signing";
    case S::committing:
        return "committing";
    case S::done:
        return "done";
    }
    return "?";
}

const char *event_name(Event e)
{
    switch (e) {
    case Event::wait_in_line:
        return "wait_in_line";
    case Event::prepare:
        return "prepare";
    case Event::follow:
        return "follow";
    case Event::queue:
        return "queue";
    case Event::start_profile:
        return "start_profile";
    case Event::sign:
        return "sign";
    case Event::commit:
        return "commit";
    case Event::answered:
        return "answered";
    case Event::abandon:
        return "abandon";
    case Event::expire:
        return "expire";
    case Event::cancel:
        return "cancel";
    }
    return "?";
}

bool stage_before_prepared(Stage s)
{
    return s == S::received || s == S::in_line || s == S::preparing;
}

} // namespace xmem::server
