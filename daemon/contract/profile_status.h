/*
 * profile_status.h — what a profiler says about its run (docs/profile-status.md): its exit
 * status, read by xmem-estimate, and the typed lines its capture writes on the status
 * descriptor (XMEM_STATUS_FD), read by the launcher. One table for C/C++; the Python
 * captures read its twin, daemon/profiler/python/xmem_profile_status.py, and unit test
 * profiler.profile_status fails when the two differ.
 *
 * Exit numbers are read by xmem-estimate and by scripts: never renumber, never reuse.
 */
#ifndef XMEM_CONTRACT_PROFILE_STATUS_H
#define XMEM_CONTRACT_PROFILE_STATUS_H

/* X(number, NAME, meaning): the exit status of xmem-profile and xmem-profile-fast. */
#define XMEM_PROFILE_EXITS(X)                                                                      \
    X(0, OK, "trace written")                                                                      \
    X(1, FAILED, "the capture failed: the script's error, a timeout or a signal")                  \
    X(2, USAGE, "bad usage")                                                                       \
    X(3, UNSUPPORTED, "fast mode cannot run this job: the caller falls back to the exact capture") \
    X(4, ENVIRONMENT,                                                                              \
      "the job's environment cannot run a capture: no interpreter, no torch, no "                  \
      "capture library (the other capture would fail alike: no retry)")                            \
    X(5, MEMORY, "the job passed the exact capture's memory limit (--max-rss)")                    \
    X(6, NO_MEMORY, "the job ran out of address space (MemoryError), a limit its caller set")      \
    X(7, NO_PROCESSES,                                                                             \
      "the job could not start a process or thread (EAGAIN), a limit its "                         \
      "caller set")                                                                                \
    X(8, REFUSED, "a --what-if change cannot be applied faithfully to this job")

/* The numbers as C names, XMEM_PROFILE_EXIT_<NAME>. */
enum xmem_profile_exit {
#define XMEM_PROFILE_EXIT_ENUM_(num, name, text) XMEM_PROFILE_EXIT_##name = num,
    XMEM_PROFILE_EXITS(XMEM_PROFILE_EXIT_ENUM_)
#undef XMEM_PROFILE_EXIT_ENUM_
};

/*
 * X(NAME, word, exit, meaning): one line on the status descriptor, "WORD" or "WORD TEXT".
 * A line that gives up names the exit status it ends with (the capture exits with it and the
 * launcher passes it on); the others say -1.
 */
#define XMEM_PROFILE_STATUS_LINES(X)                                                               \
    X(STEP, "step", -1, "step N: optimizer step N finished")                                       \
    X(DONE, "done", -1, "the trace is complete; the process exits 0 right after")                  \
    X(BUILD, "build", -1, "build TEXT: building the capture library for the job's torch")          \
    X(BUILT, "built", -1, "the build is over; the first step gets a full timeout from here")       \
    X(FAIL, "fail", XMEM_PROFILE_EXIT_FAILED, "fail TEXT: the capture gave up with line TEXT")     \
    X(ENVIRONMENT, "environment", XMEM_PROFILE_EXIT_ENVIRONMENT,                                   \
      "environment TEXT: the job's environment cannot run a capture")                              \
    X(UNSUPPORTED, "unsupported", XMEM_PROFILE_EXIT_UNSUPPORTED,                                   \
      "unsupported TEXT: fast mode cannot run this job")                                           \
    X(REFUSED, "refused", XMEM_PROFILE_EXIT_REFUSED,                                               \
      "refused TEXT: the --what-if change cannot be applied faithfully to this job")

/*
 * X(NAME, word, exit, meaning): a line the capture writes when the job met a limit its caller
 * set (xmemd's sandbox: docs/profile-status.md). The job goes on to fail its own way; the
 * launcher then exits with EXIT rather than XMEM_PROFILE_EXIT_FAILED, and xmem-estimate
 * passes it on, so xmemd reads the limit from an exit status, never from stderr.
 */
#define XMEM_PROFILE_LIMIT_LINES(X)                                                                \
    X(MEMORY_LIMIT, "memory-limit", XMEM_PROFILE_EXIT_NO_MEMORY,                                   \
      "memory-limit TEXT: the job got MemoryError (TEXT: its message)")                            \
    X(PROCESS_LIMIT, "process-limit", XMEM_PROFILE_EXIT_NO_PROCESSES,                              \
      "process-limit TEXT: fork or a new thread failed with EAGAIN (TEXT: the error)")

#endif
