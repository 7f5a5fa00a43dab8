"""daemon/contract/profile_status.h for Python, defined once: a profiler's exit status
(EXIT_*) and the typed lines its capture writes on the status descriptor (LINE_*, "WORD" or
"WORD TEXT"). Unit test profiler.profile_status fails when this and the header differ, so a
change goes in both. docs/profile-status.md says what each means.
"""

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNSUPPORTED = 3
EXIT_ENVIRONMENT = 4
EXIT_MEMORY = 5
EXIT_NO_MEMORY = 6
EXIT_NO_PROCESSES = 7
EXIT_REFUSED = 8

LINE_STEP = "step"
LINE_DONE = "done"
LINE_BUILD = "build"
LINE_BUILT = "built"
LINE_FAIL = "fail"
LINE_ENVIRONMENT = "environment"
LINE_UNSUPPORTED = "unsupported"
LINE_REFUSED = "refused"
LINE_MEMORY_LIMIT = "memory-limit"
LINE_PROCESS_LIMIT = "process-limit"

# The exit status a line that gives up ends with (the header's third column).
GIVE_UP_EXIT = {
    LINE_FAIL: EXIT_FAILED,
    LINE_ENVIRONMENT: EXIT_ENVIRONMENT,
    LINE_UNSUPPORTED: EXIT_UNSUPPORTED,
    LINE_REFUSED: EXIT_REFUSED,
}

# The exit status the launcher ends with after a limit line (the job fails its own way).
LIMIT_EXIT = {
    LINE_MEMORY_LIMIT: EXIT_NO_MEMORY,
    LINE_PROCESS_LIMIT: EXIT_NO_PROCESSES,
}
