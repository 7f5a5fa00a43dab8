"""The job's side of the sweep's zygote (zygote.py): instead of importing torch, this
process hands itself to the zygote, which forks a child in its process group to run the
script, and then ends as that child ended. The launcher watching this process (its group,
status pipe and stderr) watches the child as it would a single estimate's job.

Only a plain `python SCRIPT ARGS...` attaches, run by the interpreter the zygote runs; any
other command line, or a refusal, returns False and the capture runs here as without a
zygote. Imports nothing heavy: the point is not to pay torch's import.
"""
import json
import os
import signal
import socket
import sys


def attach(path):
    """Runs the job in the zygote at PATH and exits as it did; False when not attached."""
    argv = list(getattr(sys, "orig_argv", []))[1:]
    if not argv or argv[0].startswith("-") or not os.path.isfile(argv[0]):
        return False
    status_fd = os.environ.get("XMEM_STATUS_FD", "")
    if not status_fd.isdigit():
        return False
    env = dict(os.environ)
    env.pop("XMEM_ZYGOTE_SOCKET", None)
    job = {"argv": argv, "cwd": os.getcwd(), "env": env, "path": list(sys.path),
           "pgid": os.getpgid(0), "executable": os.path.realpath(sys.executable),
           "prefix": sys.prefix}
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        conn.connect(path)
        socket.send_fds(conn, [json.dumps(job).encode()], [0, 1, 2, int(status_fd)])
        started = conn.recv(4096) == b"start"
    except OSError:
        return False
    if not started:
        conn.close()
        return False
    # From here the child runs the job and this process only waits for its end. The
    # launcher's SIGTERM (a timeout, a limit) reaches the child too, in the same group: the
    # job gets its grace to end as it would without a zygote, and this process ends as it
    # did; SIGKILL after the grace ends both.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        end = conn.recv(4096).decode()
    except OSError:
        end = ""
    end_as(end)


def end_as(end):
    word, _, number = end.partition(" ")
    if word == "signal" and number.isdigit():
        signal.signal(int(number), signal.SIG_DFL)
        os.kill(os.getpid(), int(number))
    if word == "exit" and number.lstrip("-").isdigit():
        os._exit(int(number) & 0xFF)
    sys.stderr.write("xmem: the sweep's zygote ended before the job did\n")
    os._exit(1)
