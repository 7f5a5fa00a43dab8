"""Arms the fast capture before the user's script runs (called from sitecustomize).

It reuses the exact capture's pieces by importing them (xmem_capture): the Session (steps,
status pipe, stop after N steps, failure), the Tracker (iterations, phases, module paths),
the torch.cuda stand-in and the torch.load mapping. Only what differs is here: the trace is
written from Python, GPU tensors are meta tensors, parameters are built on host-meta.
"""
import os

import xmem_patches as patches

UNSUPPORTED = "xmem: fast mode: unsupported: "
# What the user does about a refusal: xmem-estimate --mode auto sets XMEM_FAST_FALLS_BACK=1
# and runs the exact capture itself (the line then says so, and is the only one).
FIX = "; use --mode exact, or --mode auto which falls back"
FALLING_BACK = "; falling back to the exact capture (real CPU run)"
# A job of several ranks has no exact capture to fall back on (xmem-estimate refuses it: one
# process without the ranks its collectives wait for).
RANKS_FIX = ("; a job of several ranks has fast mode only: change what is named, or "
             "estimate it as one process (--world-size 1), which leaves out what sharding "
             "saves and what NCCL adds")
_FAST_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAST_DEVICE_RULE = ("fast: GPU tensors are meta tensors; .cuda() of a host tensor "
                    "and cuda factories allocate; ops on device tensors allocate")


def arm():
    import xmem_profile_status as profile_status
    from xmem_capture import bootstrap
    env = bootstrap.parse_env()
    os.environ["XMEM_SHIM"] = "1"
    torch = bootstrap.import_torch()
    from xmem_capture import amp, cuda_shim, devices
    from .trace_writer import TraceWriter, CaptureError
    from .accumulate import Accumulation
    from .storage_tracker import Attribution, FreesBeforePhase, StorageTracker
    from .device_mode import FastDeviceMode, install_recurrent, rebind_dropout, rebind_functional
    from xmem_gpu import target
    from . import values

    writer = TraceWriter()
    session = bootstrap.start_session(writer, torch, env, CaptureError, "fast", FAST_DEVICE_RULE)

    def unsupported(why, where=None):
        """One line: the construct (WHY), the place, the fix; exit 3."""
        where = _where(torch) if where is None else where
        session.fail(UNSUPPORTED + why + where + _fix(), profile_status.LINE_UNSUPPORTED)

    try:
        capability = target.capability()
        target.multiprocessors()
    except ValueError as e:
        session.fail(str(e))
    attribution = Attribution()
    tracker = StorageTracker(writer, attribution, unsupported, Accumulation.probe())
    cuda_shim.install(torch, writer, writer.meta)
    torch2 = int(torch.__version__.split(".")[0]) >= 2
    if not torch2:  # 1.13: no CUDA autocast on meta tensors, so AMP falls back
        amp.install(torch, writer.meta)
        _refuse_autocast(torch, amp, unsupported)
        if os.environ.get("XMEM_WHAT_IF", "").startswith("amp="):  # what_if.py would add one
            unsupported("--what-if amp: autocast's casts are not modelled on fake tensors")
    bootstrap.install_load(torch, devices)
    _install_record_function(torch, attribution)
    _refuse_saving_device_tensors(torch, tracker, unsupported)
    _install_host_meta_parameters(torch, tracker)
    _install_storage_resize(torch, tracker)
    bootstrap.track_steps(session, writer, torch)
    session.owns_failure = lambda error: _fake_device_failure(torch, error, unsupported)
    from .weights import WeightsCheck
    session.tracker.observers.append(WeightsCheck(tracker, unsupported))
    session.tracker.observers.append(FreesBeforePhase(tracker))
    _take_transformer_slow_path(torch)
    from . import ranks
    ranks.install(torch, unsupported, writer.meta, tracker.is_device)
    if ranks.world_size() >= 1:
        from . import fsdp_states
        fsdp_states.install(torch, tracker, unsupported)
    original_finish = session.finish

    def finish():
        tracker.sweep()  # frees since the last op belong to the trace
        original_finish()

    session.finish = finish
    # Function mode outermost (device boundary), dispatch mode below autograd (storages).
    device_mode = FastDeviceMode(tracker, attribution, capability)
    device_mode.stand_ins = values.StandInWarning(writer.meta, lambda: _where(torch))
    install_recurrent(writer.meta)
    rebind_dropout(device_mode)
    if torch2:
        _install_cuda_autocast(torch, amp, writer.meta, device_mode)
        rebind_functional(device_mode)
    ranks.run_backward_at_the_boundary(torch, device_mode)
    device_mode.__enter__()
    tracker.__enter__()
    _install_thread_hook(device_mode)


def _install_thread_hook(device_mode):
    """Modes are per thread: new threads (the DataLoader's pin-memory thread) get the device
    boundary, so `.pin_memory()` and `.cuda()` there behave as on the main thread. Storage
    tracking stays on the main thread (docs/fast-mode.md, known gaps)."""
    import threading
    original = threading.Thread._bootstrap_inner

    def _bootstrap_inner(self):
        try:
            device_mode.__enter__()
        except Exception:  # never break the user's thread over capture bookkeeping
            pass
        return original(self)

    patches.replace("threading.Thread._bootstrap_inner", _bootstrap_inner)


def _where(torch, frames=None):
    """' at FILE:LINE' of the innermost frame outside torch and xmem: the line to look at
    (of FRAMES, a traceback's, when given; else of the current stack)."""
    from xmem_capture import script_frame
    return script_frame.where(torch, _FAST_DIR, os.environ.get("XMEM_EXACT_PYDIR"),
                              frames=frames)


def _fix():
    from .ranks import world_size
    if world_size() > 1:
        return RANKS_FIX
    return FALLING_BACK if os.environ.get("XMEM_FAST_FALLS_BACK") == "1" else FIX


def _fake_device_failure(torch, error, unsupported):
    """The script raised ERROR: when its message names the meta device, it is fast mode's
    fake GPU that the code rejected (hub kernels' `Unsupported device type 'meta'`, an
    autograd device check), not the script's fault: refused as fast mode's, at the place
    it was raised. Other errors stay the script's."""
    import re
    import traceback
    seen, depth = error, 0
    while seen is not None and depth < 8:  # a chain of causes can loop
        depth += 1
        text = str(seen)
        if re.search(r"\bmeta\b", text):
            frames = traceback.extract_tb(seen.__traceback__ or error.__traceback__)
            first = text.strip().splitlines()[0] if text.strip() else ""
            unsupported(f"{type(seen).__name__}: {first} (code that rejects fast mode's fake "
                        "GPU, meta tensors)", _where(torch, frames))
        seen = seen.__cause__ or seen.__context__


def _take_transformer_slow_path(torch):
    """nn.TransformerEncoder in eval asks whether a padding mask is left-aligned, a
    data-dependent check, before its fast path; the fast path is then never taken under a
    capture (its tensors have a torch function mode, `has_torch_function`), in either
    capture. The check answers "not aligned" for device tensors, the non-fast path the
    exact capture takes too, instead of refusing a value fast mode does not compute."""
    original = getattr(torch, "_nested_tensor_from_mask_left_aligned", None)
    if original is None:
        return

    def left_aligned(src, mask, *args, **kwargs):
        if src.is_meta or mask.is_meta:
            return False
        return original(src, mask, *args, **kwargs)

    patches.replace("torch._nested_tensor_from_mask_left_aligned", left_aligned)


def _install_cuda_autocast(torch, amp, note, device_mode):
    """torch 2.x: torch.autocast('cuda') runs as it is (the shim's torch.cuda says a GPU is
    there) and the device mode applies CUDA's casts to device tensors (autocast.py);
    torch's own GradScaler runs on the device tensors (Meta kernels for its unscale and
    scale update; .item() of found_inf reads 0: no inf found)."""
    from .autocast import Autocast
    device_mode.autocast = Autocast(device_mode.on_device)
    autocast = torch.amp.autocast_mode.autocast
    real_init = autocast.__init__

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if device_type == "cuda":
            dtype, enabled = amp.script_cuda_autocast(dtype, enabled)  # --what-if amp
        if device_type == "cuda" and amp.cuda_autocast_casts(dtype, enabled):
            amp.note_asked(dtype or torch.float16)
        real_init(self, device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    patches.replace("torch.amp.autocast_mode.autocast.__init__", __init__)
    note("amp_mapping", "autocast(cuda) on fake device tensors: CUDA's op lists")
    note("grad_scaler", "torch (Meta kernels; no inf found)")


def _refuse_autocast(torch, amp, unsupported):
    """CPU autocast does not cast meta tensors, so AMP activations would come out fp32. An
    autocast that casts nothing (dtype=torch.float32, a no-op on a GPU) runs as it is."""
    autocast = torch.autocast

    class fast_autocast(autocast):
        def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
            if device_type == "cuda" and amp.cuda_autocast_casts(dtype, enabled):
                unsupported("autocast (AMP) on CUDA: its casts are not modelled on fake tensors")
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class cuda_autocast(fast_autocast):
        def __init__(self, enabled=True, dtype=torch.float16, cache_enabled=True):
            super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    patches.replace("torch.autocast", fast_autocast)
    patches.replace("torch.amp.autocast", fast_autocast)
    patches.replace("torch.cuda.amp.autocast", cuda_autocast)


def _refuse_saving_device_tensors(torch, tracker, unsupported):
    """A checkpoint of GPU tensors needs their values: placeholders would cost the model's
    size in host RAM and leave a file of zeros, so fast mode falls back instead."""
    original = torch.save

    def has_device_tensor(obj, depth=0):
        if isinstance(obj, torch.Tensor):
            return tracker.is_device(obj)
        if depth > 4:
            return False
        if isinstance(obj, dict):
            obj = list(obj.values())
        if isinstance(obj, (list, tuple)):
            return any(has_device_tensor(v, depth + 1) for v in obj)
        return False

    def save(obj, *args, **kwargs):
        if has_device_tensor(obj):
            unsupported("torch.save of GPU tensors (fast mode has no values to write)")
        return original(obj, *args, **kwargs)

    patches.replace("torch.save", save)


def _install_record_function(torch, attribution):
    """record_function ranges (Optimizer.step#Adam.step, ...) name the outer call, as in the
    exact trace, where they come from RecordFunction."""
    rf = torch.autograd.profiler.record_function
    enter, exit_ = rf.__enter__, rf.__exit__

    def __enter__(self):
        attribution.ranges.append(self.name)
        return enter(self)

    def __exit__(self, *exc):
        if attribution.ranges:
            attribution.ranges.pop()
        return exit_(self, *exc)

    patches.replace("torch.autograd.profiler.record_function.__enter__", __enter__)
    patches.replace("torch.autograd.profiler.record_function.__exit__", __exit__)


def _install_host_meta_parameters(torch, tracker):
    """Parameters and buffers made on the host become host-meta tensors: a 7B model costs no
    host RAM, init functions run as shape-only ops, and .cuda() allocates on the device."""
    Parameter = torch.nn.Parameter
    original_new = Parameter.__new__

    def host_meta(t):
        if not isinstance(t, torch.Tensor) or t.is_meta or t.device.type != "cpu":
            return t
        if hasattr(t, "__tensor_flatten__"):
            return t  # a wrapper subclass (FSDP2's DTensor of an offloaded shard) wraps made tensors
        tracker.hosting = True
        try:
            return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device="meta")
        finally:
            tracker.hosting = False

    def __new__(cls, data=None, requires_grad=True):
        return original_new(cls, host_meta(data) if data is not None else data, requires_grad)

    patches.replace("torch.nn.Parameter.__new__", __new__)
    register_buffer = torch.nn.Module.register_buffer

    def register(self, name, tensor, persistent=True):
        return register_buffer(self, name, host_meta(tensor), persistent)

    patches.replace("torch.nn.Module.register_buffer", register)


def _install_storage_resize(torch, tracker):
    """A storage's own resize_ (FSDP2 frees an unsharded parameter by resizing its storage
    to 0 bytes and gathers it again by resizing it back) changes no tensor and runs no op:
    the tracker records it as the CUDA caching allocator sees it (StorageTracker.resize)."""
    original = torch.UntypedStorage.resize_

    def resize_(self, size):
        out = original(self, size)
        tracker.storage_resized(self)
        return out

    patches.replace("torch.UntypedStorage.resize_", resize_)
