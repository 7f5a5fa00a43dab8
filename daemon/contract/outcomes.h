/*
 * outcomes.h — the numbered outcome of every request to xmemd (docs/outcomes.md): one list,
 * read by xmemd (C++) and by the C client the SPANK plugin and `xmem status` link.
 *
 * Numbers are stored in ledgers and read by the plugin: NEVER renumber, never reuse; retire
 * one by leaving it in place. Names are stored in the ledger and shown in metrics; texts are
 * the one-line explanation. unit test daemon.outcome checks docs/outcomes.md against this.
 */
#ifndef XMEM_CONTRACT_OUTCOMES_H
#define XMEM_CONTRACT_OUTCOMES_H

/* X(number, snake_case name, text) */
#define XMEM_OUTCOMES(X)                                                                           \
    X(0, estimated, "estimated")                                                                   \
    X(1, busy, "xmemd is busy: profiling queue full")                                              \
    X(2, bad_request, "malformed request body")                                                    \
    X(3, bad_frame, "malformed frame header")                                                      \
    X(4, frame_too_large, "frame larger than the protocol limit")                                  \
    X(5, truncated_frame, "client disconnected or stalled mid-frame")                              \
    X(6, unknown_user, "the caller's uid has no passwd entry")                                     \
    X(7, root_refused, "profiling as root is disabled")                                            \
    X(8, cwd_unusable, "working directory not accessible to the caller")                           \
    X(9, script_unreadable, "entrypoint script not readable by the caller")                        \
    X(10, profile_timeout, "profile exceeded its wall-time limit")                                 \
    X(11, profile_cpu_limit, "profile exceeded its CPU-time limit")                                \
    X(12, profile_memory_limit, "profile exceeded its address-space limit")                        \
    X(13, profile_process_limit, "profile exceeded its process limit")                             \
    X(14, profile_file_limit, "profile exceeded its file-size limit")                              \
    X(15, profile_output_too_large, "profiler wrote more output than allowed")                     \
    X(16, profile_failed, "profiler exited with an error")                                         \
    X(17, profile_bad_output, "profiler output is not the expected JSON")                          \
    X(18, spawn_failed, "could not start the profiler")                                            \
    X(19, deadline_expired, "the request's deadline passed before an answer")                      \
    X(20, shutting_down, "xmemd is shutting down")                                                 \
    X(21, sign_failed, "could not sign the decision with MUNGE")                                   \
    X(22, exceeds_gpu, "estimated, but the job does not fit the GPU")                              \
    X(23, too_many_connections, "connection limit reached")                                        \
    X(24, internal_error, "internal error in xmemd")                                               \
    X(25, cannot_switch_user, "xmemd cannot run a profile as another user")                        \
    X(26, job_end_rejected, "job_end for an unknown request or one of another user")               \
    X(30, recorded, "recorded")                                                                    \
    X(31, answered, "answered")                                                                    \
    X(32, too_many_in_flight, "the caller has too many estimates or argv bytes in flight")         \
    X(33, client_gone, "the client left before the answer; its estimate was stopped")              \
    X(34, preamble_failed, "a line of the batch script's environment preamble failed")             \
    X(35, script_mismatch, "the request does not profile what its batch script runs")              \
    X(36, pending, "the estimate goes on; the job is queued held until it is ready")

/* The numbers as C names, XMEM_OUTCOME_<name>, for code that only sees the wire. */
enum xmem_outcome {
#define XMEM_OUTCOME_ENUM_(num, name, text) XMEM_OUTCOME_##name = num,
    XMEM_OUTCOMES(XMEM_OUTCOME_ENUM_)
#undef XMEM_OUTCOME_ENUM_
};

#endif
