"""Which uncaught exceptions mean the job met a limit its caller set (xmemd's sandbox sets an
address-space and a process limit), and the status line that says so
(daemon/contract/profile_status.h, docs/profile-status.md). The capture is the process that
knows what was raised: it writes the line, xmem-profile exits with the limit's own status, and
nobody after it reads the job's stderr to find out.
"""
import errno

import xmem_profile_status as profile_status

# torch's CPU allocator reports ENOMEM as a RuntimeError (c10::Error), not as MemoryError.
_TORCH_NO_MEMORY = "DefaultCPUAllocator: can't allocate memory"
# CPython's words when pthread_create fails (EAGAIN under RLIMIT_NPROC).
_NO_THREAD = "can't start new thread"


def _limit_word(exc):
    text = str(exc)
    if isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and _TORCH_NO_MEMORY in text):
        return profile_status.LINE_MEMORY_LIMIT
    # fork/clone: BlockingIOError (EAGAIN); a thread: RuntimeError.
    if (isinstance(exc, OSError) and exc.errno == errno.EAGAIN) or \
            (isinstance(exc, RuntimeError) and _NO_THREAD in text):
        return profile_status.LINE_PROCESS_LIMIT
    return None


def limit_line(exc):
    """'memory-limit TEXT' or 'process-limit TEXT' when EXC, or an exception it was raised
    from or while handling, means a limit; else None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        word = _limit_word(exc)
        if word:
            what = " ".join(f"{type(exc).__name__}: {exc}".split()).rstrip(":")
            return word + " " + what
        exc = exc.__cause__ or exc.__context__
    return None
