"""Arms the capture before the user's script runs (called from sitecustomize).

Environment (set by xmem-profile): XMEM_TRACE_OUT, XMEM_CAPTURE_LIB (and the others
capture_lib.py reads), XMEM_STEPS, XMEM_THREADS, XMEM_STATUS_FD. Child processes the
script starts get the CUDA shim (XMEM_SHIM=1) but never capture: XMEM_TRACE_OUT is removed
from the environment.

Fast mode (xmem_fast.arm) arms through the same public steps: parse_env, import_torch,
start_session, install_load, track_steps.
"""
import atexit
import os
import platform
import sys

import xmem_patches as patches
import xmem_profile_status as profile_status

_status_fd = None  # the launcher's status pipe (parse_env), for lines before a Session exists


class Session:
    """The one capture of this process: start, per-step progress, finish, exit."""

    def __init__(self, native, out, steps, status_fd):
        self.native = native
        self.out = out
        self.steps = steps
        self.status_fd = status_fd
        self.finished = False
        self.failed = False
        self.tracker = None
        # Fast mode: ERROR -> refuses (never returns) when what the script raised came from
        # its fake device, not from the script (xmem_fast/arm.py).
        self.owns_failure = None

    def status(self, line):
        if self.status_fd is None:
            return
        try:
            os.write(self.status_fd, (line + "\n").encode(errors="replace"))
        except OSError:
            self.status_fd = None  # the launcher is gone; keep going quietly

    def fail(self, message, line=profile_status.LINE_FAIL):
        """Gives up with a one-line message the launcher prints; no trace is written. LINE,
        a giving-up word of xmem_profile_status, says why, and the exit status that goes
        with it: the launcher passes it on."""
        self.status(line + " " + message)
        self.native.abandon()
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
        os._exit(profile_status.GIVE_UP_EXIT[line])

    def write_metadata(self):
        import torch
        from . import amp
        note = self.native.meta
        note("threads", torch.get_num_threads())
        note("steps", self.tracker.steps_done if self.tracker else 0)
        z = self.tracker.zero_grad_set_to_none if self.tracker else None
        if z is not None:
            note("zero_grad_set_to_none", int(z))
        note("amp", amp.amp_mode())
        if self.tracker:
            note("step_rule", self.tracker.step_rule)
            if self.tracker.step_rule == "backward":
                note("warning_steps", BACKWARD_RULE_WARNING)

    def finish(self):
        if self.finished:
            return
        self.finished = True
        self.write_metadata()
        try:
            self.native.finish()
        except Exception as e:  # CaptureError: an I/O error writing the trace
            self.fail(str(e))

    def last_step(self):
        """Called when step N returns: the trace is complete; leave without running more of
        the script (its remaining epochs, checkpoints, evaluation)."""
        self.finish()
        self.status(profile_status.LINE_DONE)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(0)

    def at_exit(self):
        """The script ended on its own: keep a shorter trace if it stepped at all."""
        if self.finished:
            return
        if self.tracker and not self.failed:
            self.tracker.close_open_step()
        if self.failed or not self.tracker or self.tracker.steps_done == 0:
            self.finished = True
            self.native.abandon()
            return
        self.finish()


BACKWARD_RULE_WARNING = (
    "the script built no torch.optim optimizer, so each backward() and the update after it "
    "counted as one step; if a step makes several, call "
    "torch.cuda.nvtx.mark(\"xmem.step\") after each update")

EXACT_DEVICE_RULE = ("identity: cuda factories/copies and ops on g tensors are g; "
                     "DataLoader fetch and host-only ops are h")


def _static_metadata(writer, torch, capture, device_rule):
    writer.meta("torch", torch.__version__)
    writer.meta("capture", capture)
    writer.meta("python", sys.executable + " " + platform.python_version())
    writer.meta("host", platform.node())
    writer.meta("argv", " ".join(sys.argv) if sys.argv else "")
    writer.meta("device_rule", device_rule)


def _required_int(name):
    """A number the launcher always sets: its default lives there (contract/defaults.h), so a
    missing one means the capture was started by something else, and guessing would hide it."""
    value = os.environ.get(name, "")
    if not value.isdigit():
        sys.stderr.write(f"xmem: {name} is {'missing' if not value else repr(value)}: start "
                         "the capture through xmem-profile, which sets it\n")
        os._exit(1)
    return int(value)


def parse_env():
    out = os.environ.pop("XMEM_TRACE_OUT")
    steps = _required_int("XMEM_STEPS")
    threads = int(os.environ.get("XMEM_THREADS", "0"))
    fd = os.environ.pop("XMEM_STATUS_FD", None)
    status_fd = int(fd) if fd and fd.isdigit() else None
    if status_fd is not None:
        try:
            os.set_inheritable(status_fd, False)  # grandchildren must not hold the launcher's pipe
        except OSError:
            # A runner between the launcher and Python closed it: the capture goes on without
            # progress lines, and the launcher reads the steps from the trace (docs/capture.md).
            status_fd = None
    global _status_fd
    _status_fd = status_fd
    return out, steps, threads, status_fd


def _status(line):
    if _status_fd is not None:
        try:
            os.write(_status_fd, (line + "\n").encode(errors="replace"))
        except OSError:
            pass


def _give_up(message):
    """Before a Session exists, the environment cannot run a capture (no torch, no capture
    library): the one line the launcher prints (through the status pipe, else stderr), and
    the exit status xmem-profile passes on; xmem-estimate then tries no other capture."""
    _status(profile_status.LINE_ENVIRONMENT + " " + message)
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    os._exit(profile_status.EXIT_ENVIRONMENT)


def import_torch():
    try:
        import torch
    except ImportError as e:
        _give_up(f"xmem: {sys.executable} cannot import torch ({e}); activate the job's "
                 "environment, or pass --python with an interpreter that has torch")
    return torch


def _capture_library(torch):
    """The library for the job's torch (capture_lib.py); processes the job starts get the
    same one without looking again."""
    from . import capture_lib
    try:
        path = capture_lib.library_for(torch, _status)
    except capture_lib.BuildError as e:
        _give_up(str(e))
    # Processes the job starts load the cached file by name: this process's descriptor
    # (capture_lib.named_path) is not theirs.
    os.environ["XMEM_CAPTURE_LIB"] = capture_lib.named_path(path)
    os.environ.pop("XMEM_CAPTURE_SRC", None)
    return path


def start_session(writer, torch, env, capture_error, capture, device_rule):
    """Opens the trace through WRITER (the capture library, or fast mode's Python writer)
    with ENV from parse_env(), notes the static metadata and enters the setup phase. A trace
    that cannot be opened (CAPTURE_ERROR) ends the process through Session.fail."""
    out, steps, threads, status_fd = env
    session = Session(writer, out, steps, status_fd)
    if threads > 0:
        torch.set_num_threads(threads)
    try:
        writer.start(out)
    except capture_error as e:
        session.fail(str(e))
    _static_metadata(writer, torch, capture, device_rule)
    writer.phase("setup")
    return session


def track_steps(session, writer, torch):
    """Counts iterations and phases, stops after the last step, and at exit keeps the trace
    of a script that ended on its own (or drops that of a failed one)."""
    from . import phases, what_if
    session.tracker = phases.Tracker(writer, session.steps,
                                     lambda n: session.status(f"{profile_status.LINE_STEP} {n}"), session.last_step)
    session.tracker.install(torch)
    what_if.install(session, session.tracker, torch)
    _install_failure_hook(session)
    atexit.register(session.at_exit)


def arm():
    """Starts capture (or, in a child process, only the CUDA shim)."""
    capture = "XMEM_TRACE_OUT" in os.environ
    os.environ["XMEM_SHIM"] = "1"
    if capture:
        env = parse_env()
    torch = import_torch()
    from .native import Native, CaptureError
    from . import amp, cuda_shim, devices, dropout, index_put, reduce, rnn, sdpa

    native = Native(_capture_library(torch))
    session = None
    if capture:
        session = start_session(native, torch, env, CaptureError, "exact", EXACT_DEVICE_RULE)
    cuda_shim.install(torch, native, native.meta)
    amp.install(torch, native.meta)
    sdpa.install()
    dropout.install()
    index_put.install()
    reduce.install()
    rnn.install(native.meta)
    install_load(torch, devices)
    devices.install_thread_hook(native)
    devices.install_storage_resize(native)
    devices.enter_thread_mode(native)
    if session is not None:
        track_steps(session, native, torch)


def _install_failure_hook(session):
    """The job failed: no trace. When what it raised means a limit its caller set, the
    status line says so before Python prints the traceback (limits.py)."""
    from . import limits
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        session.failed = True
        line = limits.limit_line(value)
        if line:
            session.status(line)
        previous(kind, value, tb)
        if session.owns_failure is not None and isinstance(value, Exception):
            session.owns_failure(value)

    patches.replace("sys.excepthook", excepthook)


def install_load(torch, devices):
    """torch.load reads to the host; map_location naming CUDA (or checkpoints saved from
    CUDA with no map_location) then moves every tensor to the device, as a GPU run does."""
    original = torch.load

    def wants_cuda(location):
        if location is None:
            return None  # decided by the saved locations
        if isinstance(location, dict):
            return any(devices.is_cuda_spec(v) for v in location.values())
        if callable(location):
            return False
        return devices.is_cuda_spec(location) or isinstance(location, int)

    def load(f, map_location=None, *args, **kwargs):
        cuda = wants_cuda(map_location)
        saved_on_cuda = []

        def to_host(storage, location):
            saved_on_cuda.append(str(location).startswith("cuda"))
            return storage

        with devices.host_scope():
            result = original(f, to_host if cuda is not False else map_location, *args, **kwargs)
        if cuda or (cuda is None and any(saved_on_cuda)):
            result = devices.to_device_tree(result)
        return result

    patches.replace("torch.load", load)
