// Runs the training command as a child in its own process group and watches it.
//
// The child's shim reports progress on a status pipe (fd in XMEM_STATUS_FD), one line each:
//   "step N"      optimizer step N finished
//   "done"        the trace is complete; the child exits 0 right after
//   "fail TEXT"   the shim gave up with the one-line message TEXT; "environment TEXT" and
//                 "unsupported TEXT" likewise, typed: each names the exit status it ends with
//   "build TEXT"  the shim is building the capture library for the job's torch (TEXT, one
//                 line, is shown at once); the step timer waits until "built", up to
//                 k_build_limit_s
//   "built"       the build is over; the first step gets a full timeout from here
//   "memory-limit TEXT", "process-limit TEXT"
//                 the job met a limit its caller set (MemoryError; EAGAIN from fork or a
//                 thread) and is failing its own way; the launcher's exit status says which
// The words and their exits are daemon/contract/profile_status.h. Its stderr is kept (the
// last 64 KiB) and shown only when it fails, unless verbose; it is never parsed.
#pragma once

#include "contract/profile_status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xmem::profile
{

struct ChildSpec {
    std::vector<std::string> argv;
    std::vector<std::pair<std::string, std::string>> env; // added to (or replacing) ours
    int timeout_s = 120; // least wait for the next optimizer step (k_step_timeout_factor)
    int budget_s = 540;  // longest the whole run may take, a library build not counted
    bool verbose = false;
    // Print "xmem: NAME: step N of STEPS after S s" on our stderr as steps finish (a long
    // exact capture is otherwise silent for minutes).
    bool progress = false;
    std::string name; // the script, for the progress lines
    int steps = 0;    // steps asked for, for the progress lines
    // Stop the job when its process group's resident memory passes this (0: no limit;
    // memory.h, docs/capture.md "Memory").
    uint64_t max_rss = 0;
};

// How the job under capture ended, as xmem-profile saw it. Not an outcome: that word names
// xmemd's numbered request outcomes (contract/outcomes.h).
enum class ChildEnd {
    done,          // trace complete
    exited,        // exited 0 without saying done (script ended before --steps steps)
    failed,        // non-zero exit or killed by a signal
    shim_failed,   // the shim gave up with a line: "fail TEXT" or a typed one
    timed_out,     // no step within timeout_s, or the whole budget_s spent (budget_spent)
    out_of_memory, // the group's RSS passed max_rss; stopped
    interrupted,   // xmem-profile itself got SIGINT/SIGTERM
    not_started,   // fork/exec failed
};

// Longest a first-use build of the capture library may take (docs/capture.md).
constexpr int k_build_limit_s = 600;

// Each step after the first may take this many times the first step's time (start to step
// 1) when that is more than ChildSpec::timeout_s: on a slow machine every step is slow.
constexpr int k_step_timeout_factor = 3;

struct ChildResult {
    ChildEnd outcome = ChildEnd::not_started;
    int exit_code = -1;        // when it exited
    int signal = 0;            // when a signal killed it
    int steps = 0;             // last step reported
    bool building = false;     // between "build" and "built"
    bool budget_spent = false; // timed out on budget_s rather than timeout_s
    int step_timeout_s = 0;    // the wait for a next step that ran out (timed out on it)
    std::string message;       // shim's fail text, or why it did not start
    // The exit the shim's giving-up line named, and the one a limit line named (or fork's
    // EAGAIN; 0 when no limit was met): contract/profile_status.h.
    int give_up_exit = XMEM_PROFILE_EXIT_FAILED;
    int limit_exit = 0;
    std::string stderr_tail;
    double seconds = 0;
    uint64_t peak_rss = 0; // largest group RSS seen (sampled every k_rss_poll_ms)
};

// How often the launcher samples the group's RSS: a CPU kernel grows it by at most a few
// GB a second, and a sample costs a walk over /proc.
constexpr int k_rss_poll_ms = 250;

ChildResult run_child(const ChildSpec &spec);

// Last N_LINES lines of TEXT, each prefixed with INDENT.
std::string tail_lines(const std::string &text, int n_lines, const char *indent);

} // namespace xmem::profile
