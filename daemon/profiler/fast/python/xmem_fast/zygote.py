"""The sweep's zygote (docs/estimate.md, "What a sweep costs"): one interpreter that imports
torch once, then forks one child per value of `xmem estimate --sweep` in fast mode.

    python -m xmem_fast.zygote SOCKET

xmem-estimate starts it (through `xmem-profile-fast --zygote`) and reads one line: "ready",
or why it cannot fork safely (then the sweep runs one process per value, as without it). It
serves until its stdin ends. Each value still runs under its own xmem-profile: the job the
launcher starts is a Python whose fast sitecustomize, seeing XMEM_ZYGOTE_SOCKET, connects
here instead of importing torch (attach.py). The zygote forks a child that joins that
process's group, takes its stdin, stdout, stderr, status pipe, environment, directory and
argv, arms the capture and runs the script; its end is sent back, and the attached process
ends the same way. So the launcher's limits, timeouts and status words hold per value, as
for a single estimate; the zygote runs no torch op and holds no user state.
"""
import os
import select
import socket
import sys

# numpy's OpenBLAS starts nproc - 1 threads when it loads, and a fork copies only the
# calling thread: one thread at fork time is the condition (checked below).
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import torch  # noqa: E402,F401  (the point: once, before the forks)
from xmem_capture import bootstrap  # noqa: E402,F401  (what a child's arm() imports)
from xmem_fast import arm  # noqa: E402

MESSAGE_BYTES = 1 << 20
MAX_FDS = 8


def threads():
    return len(os.listdir("/proc/self/task"))


def main(path):
    n = threads()
    if n != 1:
        print(f"{n} threads after `import torch` (a fork copies one)", flush=True)
        return 0
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(16)
    print("ready", flush=True)
    quiet = os.open(os.devnull, os.O_WRONLY)  # xmem-estimate reads no further
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    os.close(quiet)
    waiting = {}  # child pid -> the attached process's connection
    while True:
        readable, _, _ = select.select([listener, sys.stdin], [], [], 0.1)
        reap(waiting)
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 4096):
            return 0
        if listener in readable:
            conn, _ = listener.accept()
            pid = serve(conn, listener, waiting)
            if pid:
                waiting[pid] = conn


def reap(waiting):
    while waiting:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is None:
            continue
        word = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else \
            f"exit {os.waitstatus_to_exitcode(status)}"
        reply(conn, word)
        conn.close()


def reply(conn, word):
    try:
        conn.send(word.encode())
    except OSError:  # the attached process is gone (its group was stopped)
        pass


def serve(conn, listener, waiting):
    """Forks the child for one attached process; its pid, or None when refused."""
    import json
    try:
        data, fds, _, _ = socket.recv_fds(conn, MESSAGE_BYTES, MAX_FDS)
        job = json.loads(data)
    except (OSError, ValueError):
        conn.close()
        return None
    why = refusal(job, fds)
    if why:
        reply(conn, "no " + why)
        conn.close()
        for fd in fds:
            os.close(fd)
        return None
    pid = os.fork()
    if pid == 0:
        child(job, fds, [listener, conn, *waiting.values()])
    for fd in fds:
        os.close(fd)
    try:
        os.setpgid(pid, job["pgid"])  # also in the child: whichever runs first
    except OSError as e:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        reply(conn, f"no cannot join its process group: {e.strerror}")
        conn.close()
        return None
    reply(conn, "start")
    return pid


def refusal(job, fds):
    if len(fds) != 4:
        return "expected stdin, stdout, stderr and the status pipe"
    if job.get("executable") != os.path.realpath(sys.executable) or \
            job.get("prefix") != sys.prefix:
        return "another interpreter than the zygote's"
    return ""


def child(job, fds, sockets):
    """In the forked child: becomes the attached process's job, then exits as it would."""
    try:
        os.setpgid(0, job["pgid"])
    except OSError:
        os._exit(126)  # the zygote refuses it too; no user code ran
    for s in sockets:
        s.close()
    for target, fd in zip((0, 1, 2), fds[:3]):
        os.dup2(fd, target)
    status_fd = fds[3]
    for fd in fds[:3]:
        if fd > 2:
            os.close(fd)
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    os.environ["XMEM_STATUS_FD"] = str(status_fd)
    script = os.path.abspath(job["argv"][0])
    sys.argv = list(job["argv"])
    sys.path[:] = [os.path.dirname(os.path.realpath(script))] + job["path"][1:]
    os._exit(run(script))


def run(script):
    """The script as `python SCRIPT` runs it: its exit status, the atexit handlers after."""
    import atexit
    import runpy
    import threading
    code = 0
    try:
        arm.arm()
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = exit_code(e.code)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    return code


def exit_code(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
