"""Writes docs/trace-format.md from Python, with the interface of the exact capture's
`Native` (xmem_capture/native.py), so its Session, Tracker and torch.cuda stand-in drive
this writer unchanged.

Events go to a spool file; at the end the final file gets the header, the metadata (some is
only known at the end), the events and the `Z` line, and is renamed into place, so a trace
under its final name is always complete (the exact capture's rule). Every record is spelled
by xmem_trace (installed beside xmem_capture), the format's one Python definition.
"""
import os

from xmem_trace import DEV_GPU, VERSION_LINE, fraction_text, one_line, record


class CaptureError(RuntimeError):
    pass


class TraceWriter:
    def __init__(self):
        self._meta = []
        self._names = [""]          # intern() ids: module paths from the Tracker
        self._contexts = {}         # context text -> S id written in the spool
        self._module = 0
        self._pending_iteration = None
        self._phase = None
        self._written_phase = None
        self._spool = None
        self._out = None
        self.allocs = self.frees = self.live_bytes = 0
        self._device_peak = 0

    # -- Native's interface ---------------------------------------------------------------
    def start(self, path):
        self._out = path
        try:
            self._spool = open(path + ".spool", "w", buffering=1 << 20)
        except OSError as e:
            raise CaptureError(f"xmem: {path}: cannot write the trace: {e.strerror}") from None

    def meta(self, key, value):
        self._meta.append((key, one_line(value)))

    def intern(self, name):
        self._names.append(name)
        return len(self._names) - 1

    def set_module(self, nid):
        self._module = nid

    def iteration(self, n):
        self._pending_iteration = n  # written before the next event (no empty iteration)

    def phase(self, name):
        """Written now, not before the phase's first event: a phase that allocates nothing
        (1.13's zero_grad(set_to_none=False)) is still a fact the analysis needs (the
        set_to_none=True rewrite for 2.x looks for zero_grad marks)."""
        self._phase = name
        if self._spool is not None:
            self._write_markers()

    def kernel(self, text):
        if self._spool is not None:
            self._spool.write(record("K", *one_line(text).split(" ", 2)))

    def empty_cache(self):
        self._write_markers()
        self._spool.write(record("E"))

    def memory_fraction(self, fraction):
        self._write_markers()
        self._spool.write(record("X", fraction_text(fraction)))

    def device_bytes(self):
        return self.live_bytes

    def device_peak_bytes(self):
        return self._device_peak

    def reset_device_peak(self):
        self._device_peak = self.live_bytes

    def set_dev(self, tag):
        return 0

    def totals(self):
        return self.allocs, self.frees, self.live_bytes

    def finish(self):
        out = self._out
        try:
            self._spool.close()
            with open(out + ".tmp", "w") as f:
                f.write(VERSION_LINE + "\n")
                for key, value in self._meta:
                    f.write(record("M", key, value))
                with open(out + ".spool") as spool:
                    while True:
                        chunk = spool.read(1 << 20)
                        if not chunk:
                            break
                        f.write(chunk)
                f.write(record("Z", self.allocs, self.frees, self.live_bytes))
            os.replace(out + ".tmp", out)
            os.unlink(out + ".spool")
        except OSError as e:
            raise CaptureError(f"xmem: {out}: cannot write the trace: {e.strerror}") from None

    def abandon(self):
        if self._spool is None:
            return
        try:
            self._spool.close()
        except OSError:
            pass
        for suffix in (".spool", ".tmp"):
            try:
                os.unlink(self._out + suffix)
            except OSError:
                pass

    # -- events from the storage tracker -------------------------------------------------
    def module_path(self):
        return self._names[self._module]

    def alloc(self, sid, nbytes, context):
        self._write_markers()
        cid = self._contexts.get(context)
        if cid is None:
            cid = len(self._contexts) + 1
            self._contexts[context] = cid
            self._spool.write(record("S", cid, context))
        self._spool.write(record("A", sid, nbytes, DEV_GPU, 0, cid))
        self.allocs += 1
        self.live_bytes += nbytes
        if self.live_bytes > self._device_peak:
            self._device_peak = self.live_bytes

    def free(self, sid, nbytes):
        # A free found while the next iteration's mark waits happened before that iteration
        # began: the tracker writes the frees since the last op when a phase begins
        # (storage_tracker.FreesBeforePhase), and a step's end queues the mark first.
        if self._pending_iteration is None:
            self._write_markers()
        self._spool.write(record("F", sid))
        self.frees += 1
        self.live_bytes -= nbytes

    def _write_markers(self):
        if self._pending_iteration is not None:
            self._spool.write(record("I", self._pending_iteration))
            self._pending_iteration = None
            self._written_phase = None  # every iteration states its phase
        if self._phase is not None and self._phase != self._written_phase:
            self._spool.write(record("P", self._phase))
            self._written_phase = self._phase
