"""Finds every storage the script puts on the (fake) GPU and when it dies, below autograd.

A TorchDispatchMode sees every ATen op the script runs -- forward, the autograd engine's
backward ops, the optimizer -- after autograd, so outputs are plain meta tensors. A meta
storage is keyed by its StorageImpl address; it is an allocation the first time an op
returns it (views and in-place results share it, so they count once) and freed when a weak
reference to the StorageImpl expires. Tensors autograd saves for backward never reach
Python, so liveness cannot come from Python objects: the weak references are checked at
every op boundary, which puts autograd's C++ frees before the next op's allocation, in
eager order.

Device rule (the exact capture's, docs/capture.md): outputs are on the device when one of
the op's meta inputs is; a factory (no meta input) allocates on the device unless the
tracker is `hosting` (parameters and buffers being built: host tensors that cost nothing) or
`scripting` (the script itself named the meta device: its own meta tensors, on no GPU, even
when the factory copies a device tensor's shape, `zeros_like(t, device="meta")`);
meta storages made from host-meta inputs stay host-meta, from the script's meta ones stay
the script's; an op with host-meta inputs and real host tensors (a job that never moved its
model to the GPU) runs on meta copies of the real ones, so a CPU-only job runs to its steps
with no device storage, as it does in the exact capture; outputs a CUDA kernel returns on
the host (attention.py's HOST_OUTPUTS) are host-meta. Only device storages are written. An op's outputs are written in the order it
returns them, or the order its CUDA kernel allocates them in (shape_kernels.ALLOCATION_ORDER).
"""
import os
import threading
from itertools import compress

import torch

from torch.utils._python_dispatch import TorchDispatchMode
from xmem_gpu import index_put

from . import formulas, ranks
from .attention import HOST_OUTPUTS
from .scratch import AFTER, SCRATCH
from .shape_kernels import ALLOCATION_ORDER, KERNELS

# The tensor's StorageImpl: Tensor._storage() in 1.13, untyped_storage() from 2.0 on.
_storage = getattr(torch.Tensor, "untyped_storage", None) or torch.Tensor._storage
_expired = torch.UntypedStorage._expired
_free_weak_ref = torch.UntypedStorage._free_weak_ref
_CONV_OPS = ("aten::convolution", "aten::convolution_backward")
_STORAGE_RESIZE = "UntypedStorage.resize_"
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_META = torch.device("meta")


def _fake_mode_active():
    """Whether a FakeTensorMode runs the op (torch 2.x; 1.13 has none to ask)."""
    return _FAKE_KEY is not None and torch._C._get_dispatch_mode(_FAKE_KEY) is not None


_FAKE_KEY = getattr(getattr(torch._C, "_TorchDispatchModeKey", None), "FAKE", None)


def _tensors(value, depth=0):
    """The tensors of an op's arguments or results (tensors, lists and tuples of them, two
    levels deep: what ATen schemas allow), without pytree's per-node cost."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)) and depth < 2:
        for v in value:
            yield from _tensors(v, depth + 1)
    elif isinstance(value, dict) and depth < 2:
        for v in value.values():
            yield from _tensors(v, depth + 1)


def plain_tensors(t):
    """T, or the tensors a wrapper subclass wraps (FSDP2's DTensor parameters: the local
    shard): a wrapper has no storage of its own, and is on the device where they are."""
    if type(t) in _PLAIN or not hasattr(t, "__tensor_flatten__"):
        yield t
        return
    for name in t.__tensor_flatten__()[0]:
        inner = getattr(t, name, None)
        if isinstance(inner, torch.Tensor):
            yield from plain_tensors(inner)


def _arguments(args, kwargs):
    """The tensors of an op's arguments, tensor lists included (foreach ops take lists)."""
    yield from _tensors(args)
    yield from _tensors(kwargs)


class Attribution:
    """What runs now: the outermost torch call and the record_function ranges."""

    def __init__(self):
        self.call = None
        self.ranges = []

    def outer(self, inner):
        if self.ranges:
            return self.ranges[0]
        return self.call or inner


class StorageTracker(TorchDispatchMode):
    def __init__(self, writer, attribution, on_unsupported, accumulation=None):
        super().__init__()
        self.writer = writer
        # The engine's gradient sums run in place as without this mode (accumulate.py).
        self.accumulation = accumulation
        self.attribution = attribution
        self.on_unsupported = on_unsupported
        self.hosting = False
        self.scripting = False
        self.device = {}   # storage key -> (trace id or None (no block), bytes, weak ref)
        self.host = {}     # storage key -> weak ref (host-meta: parameters before .cuda())
        self.script_meta = {}  # storage key -> weak ref (meta tensors the script made itself)
        # storage key -> weak ref: made from meta tensors no op showed (made on a thread
        # without this mode); on no side known, so not written: the weights check
        # (weights.py) refuses a job whose parameters are such tensors.
        self.untraced = {}
        # Device storages may be recorded from other threads (adopt: transformers loads
        # weights in a thread pool) while the main thread sweeps.
        self._lock = threading.Lock()
        self._kept = {"h": self.host, "m": self.script_meta, "u": self.untraced}
        self._next_id = 1
        self._op_names = {}
        # The device storages' keys and weak refs as parallel lists: the per-op expiry check
        # is then one C-level pass (map/compress) instead of a Python loop.
        self._keys = []
        self._refs = []
        # Forked children (DataLoader workers) inherit the mode and the trace file: only
        # the process that armed the capture records.
        self._pid = os.getpid()

    # -- queries used by the device mode ---------------------------------------------------
    def is_device(self, t):
        return any(p.is_meta and _storage(p)._cdata in self.device for p in plain_tensors(t))

    def is_host(self, t):
        """Whether T is host-meta: a parameter or buffer built on the host."""
        return t.is_meta and _storage(t)._cdata in self.host

    def device_bytes(self):
        """Bytes of the live device storages, frees since the last op included."""
        self.sweep()
        return self.writer.live_bytes

    # -- the mode -------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if os.getpid() != self._pid or _fake_mode_active():
            # A FakeTensorMode's tensors hold no memory on a GPU either: DTensor computes
            # an op's output placement on fake tensors of the global shape (AdamW's state
            # of FSDP2's shards: three times the unsharded model at step 1, counted here).
            return func(*args, **kwargs)
        if ranks.WRAPPERS_RUN_THEIR_OPS and any(
                type(t) not in _PLAIN and hasattr(t, "__tensor_flatten__")
                for t in _arguments(args, kwargs)):
            # A wrapper subclass (DTensor) runs the op on the tensors it wraps: let it, so
            # that this mode sees those ops (FSDP2's optimizer state and steps).
            return NotImplemented
        self.sweep()
        dev = self._input_device(_arguments(args, kwargs))
        if dev == "g" and self.scripting and "device" in kwargs:
            # The script named the meta device for this factory of a device tensor's shape
            # (DeepSpeed's zeros_like(param, device="meta")): its output is on no GPU.
            dev = "m"
        if ranks.keeps_host_data(func, args):
            return args[0]
        if getattr(kwargs.get("device"), "type", None) == "cuda":
            # A factory naming the GPU where the device boundary (a function mode) is not
            # active: inside a backward, FSDP2's pre-backward all-gather buffers.
            kwargs = dict(kwargs, device=_META)
        if dev is not None and func is torch.ops.aten._local_scalar_dense.default:
            self.on_unsupported("a GPU value read by Python control flow (bool() or a comparison "
                                "of a GPU tensor)")
        if dev in _HOST and _has_real_tensor(args, kwargs) and not _mutates_real(func, args, kwargs):
            args, kwargs = _real_to_meta(args), _real_to_meta(kwargs)
        if self.accumulation is not None:
            func = self.accumulation.in_place(func, args, kwargs)
        func = formulas.in_place(func, args)  # the plain branch of formulas (formulas.py)
        scratch = self._scratch(func, dev, args, kwargs)
        kernel = KERNELS.get(func)
        try:
            out = kernel(*args, **kwargs) if kernel is not None else func(*args, **kwargs)
        except NotImplementedError:
            if dev is None:
                raise
            self.on_unsupported(_no_meta_kernel(self._op_name(func), func))
        except RuntimeError:
            if dev not in _HOST or not _has_real_tensor(args, kwargs):
                raise
            # Host-meta parameters met real host data: the model never went to the GPU.
            self.on_unsupported(f"{self._op_name(func)} mixes the host model with host data: "
                                "the job makes no GPU tensors (a forgotten --cuda flag?)")
        del scratch  # freed at the next op boundary, as the CUDA kernel frees it on return
        if dev is None:
            dev = "h" if self.hosting else "m" if self.scripting else "g"
        hosted = {id(out[i]) for i in HOST_OUTPUTS.get(func, ())}
        order = ALLOCATION_ORDER.get(func)
        for t in (out[i] for i in order) if order else _tensors(out):
            if t.is_meta:
                self._note_output(t, "h" if id(t) in hosted else dev, func)
        self._after(func, dev, out, args, kwargs)
        formulas.made(func, out)
        return out

    def _scratch(self, func, dev, args, kwargs):
        """Device buffers the CUDA kernel allocates and frees inside the op (scratch.py),
        live while the op's outputs are allocated."""
        sizes = SCRATCH.get(func)
        if sizes is None or dev != "g":
            return None
        held = [torch.empty(shape, dtype=dtype, device="meta") for shape, dtype in sizes(*args)]
        for t in held:
            self._note_output(t, "g", func)
        return held

    def _after(self, func, dev, out, args, kwargs):
        """Buffers the CUDA kernel allocates after its outputs and frees before it returns
        (scratch.AFTER), written in its order: each free at once."""
        steps = AFTER.get(func)
        if steps is None or dev != "g":
            return

        def allocate(shape, dtype):
            t = torch.empty(shape, dtype=dtype, device="meta")
            self._note_output(t, "g", func)
            return t
        index_put.run(steps(out, *args, **kwargs), allocate, self.sweep)

    def _input_device(self, flat):
        """'g' if a meta input is on the device, else 'h' if one is host-meta, else 'u' if
        one is untraced, else 'm' (the script's own meta tensors); None if none is meta."""
        found = None
        for t in flat:
            if t.is_meta:
                key = _storage(t)._cdata
                if key in self.device:
                    return "g"
                if found != "h":
                    kind = "h" if key in self.host else "m" if key in self.script_meta else "u"
                    found = kind if found is None or _RANK[kind] > _RANK[found] else found
        return found

    def _note_output(self, t, dev, func):
        storage = _storage(t)
        key = storage._cdata
        entry = self.device.get(key)
        if entry is not None:
            if storage.nbytes() != entry[1]:
                # An out= variant or resize_ grew it: on a GPU resize_bytes_cuda.
                self.resize(storage, self._context(func))
            return
        if key in self.host or key in self.script_meta or key in self.untraced:
            return
        kept = self._kept.get(dev)
        if kept is not None:
            kept[key] = storage._weak_ref()
            return
        self._record_device(storage, key, self._context(func))

    def adopt(self, t, call):
        """A device storage that no dispatched op showed: torch.tensor(data, device="cuda")
        builds its meta tensor with the Python dispatch keys excluded in torch 2.x. CALL (the
        torch function that named the GPU) is its context."""
        storage = _storage(t)
        key = storage._cdata
        if key in self.device:
            return
        # A factory like empty_like(meta_tensor, device="cuda") (Module.to_empty) took its
        # input's side: the call named the GPU, so its output is a device storage.
        for kept in self._kept.values():
            ref = kept.pop(key, None)
            if ref is not None:
                _free_weak_ref(ref)
        self._record_device(storage, key, self.writer.module_path() + "|" + call)

    def _record_device(self, storage, key, context):
        nbytes = storage.nbytes()
        ref = storage._weak_ref()
        with self._lock:
            sid = self._next_id
            self._next_id += 1
            self.device[key] = (sid, nbytes, ref)
            self._keys.append(key)
            self._refs.append(ref)
            self.writer.alloc(sid, max(nbytes, 1), context)

    def storage_resized(self, storage):
        """STORAGE.resize_(n) returned: no op shows it. Frees since the last op come first,
        in eager order; on a GPU even a resize to the same size takes a new block."""
        if os.getpid() != self._pid or storage._cdata not in self.device:
            return
        self.sweep()
        self.resize(storage, self._context_of(_STORAGE_RESIZE))

    def resize(self, storage, context):
        """A device storage that now holds storage.nbytes() bytes, recorded as the CUDA
        caching allocator sees resize_bytes_cuda (docs/cuda-semantics.md): a block of the
        new size is allocated and the old bytes copied into it, then the old block is freed
        (both are live during the copy); to 0 bytes, the old block is only freed, and from
        0 a block is only allocated. The storage keeps its key, so its tensors stay on the
        device while it holds no block (FSDP2's resharded parameters)."""
        key = storage._cdata
        nbytes = storage.nbytes()
        with self._lock:
            entry = self.device.get(key)
            if entry is None:
                return
            sid, old, ref = entry
            new_sid = None
            if nbytes:
                new_sid = self._next_id
                self._next_id += 1
                self.writer.alloc(new_sid, nbytes, context)
            if sid is not None:
                self.writer.free(sid, max(old, 1))
            self.device[key] = (new_sid, nbytes, ref)

    def _op_name(self, func):
        name = self._op_names.get(func)
        if name is None:
            name = getattr(func, "aten_op", func)._schema.name  # formulas.py's twins name an op
            self._op_names[func] = name
        return name

    def _context(self, func):
        return self._context_of(self._op_name(func))

    def _context_of(self, inner):
        outer = self.attribution.outer(inner)
        if inner in _CONV_OPS:
            # A cuDNN/CPU convolution allocates its outputs with at::empty: say so, as the
            # exact trace does, so the estimator keeps them (docs/estimate.md).
            inner = inner + ">aten::empty"
        text = outer if outer == inner else outer + ">" + inner
        return self.writer.module_path() + "|" + text

    # -- frees ---------------------------------------------------------------------------
    def sweep(self):
        """Writes a free for every device storage whose StorageImpl died since the last op."""
        expired = list(map(_expired, self._refs))
        if True in expired:
            with self._lock:
                self._free_expired(expired)
        for kept in self._kept.values():
            if kept:
                for key in [k for k, ref in kept.items() if _expired(ref)]:
                    _free_weak_ref(kept.pop(key))

    def _free_expired(self, expired):
        """EXPIRED: the first len(EXPIRED) device storages' flags (others arrived since)."""
        n = len(expired)
        for key in compress(self._keys, expired):
            sid, nbytes, ref = self.device.pop(key)
            _free_weak_ref(ref)
            if sid is not None:  # None: resized to 0 bytes, it holds no block
                self.writer.free(sid, max(nbytes, 1))
        alive = [not e for e in expired]
        self._keys = list(compress(self._keys[:n], alive)) + self._keys[n:]
        self._refs = list(compress(self._refs[:n], alive)) + self._refs[n:]


class FreesBeforePhase:
    """A Tracker observer (xmem_capture/phases.py): when a phase begins, the frees since the
    last op are written first, in the phase they happened in, as the exact capture writes
    each free when it happens. FSDP2 drops its last reduce-scatter input when the backward
    ends; written at the next op, the optimizer's, it counted among the gradients."""

    def __init__(self, tracker):
        self.tracker = tracker

    def phase(self, name):
        if os.getpid() == self.tracker._pid:
            self.tracker.sweep()

    def training_forward(self, module):
        pass

    def step_finished(self, n):
        pass


# Meta storages not on the device: host-meta and untraced ones run real host data on meta
# copies; an op's outputs take the strongest kind among its inputs.
_HOST = ("h", "u")
_RANK = {"m": 1, "u": 2, "h": 3}


def _has_real_tensor(args, kwargs):
    return any(not t.is_meta for t in _arguments(args, kwargs))


def _mutates_real(func, args, kwargs):
    """Whether FUNC writes into a real host tensor among its arguments (a meta copy of it
    would lose the write)."""
    schema = getattr(func, "_schema", None)
    if schema is None:
        return True
    for i, a in enumerate(schema.arguments):
        if a.alias_info is None or not a.alias_info.is_write:
            continue
        value = kwargs.get(a.name) if a.kwarg_only or i >= len(args) else args[i]
        if any(not t.is_meta for t in _tensors(value)):
            return True
    return False


def _real_to_meta(value, depth=0):
    """VALUE with its real host tensors replaced by meta tensors of the same shape."""
    if isinstance(value, torch.Tensor):
        return value if value.is_meta else value.to("meta")
    if isinstance(value, (list, tuple)) and depth < 2:
        return type(value)(_real_to_meta(v, depth + 1) for v in value)
    if isinstance(value, dict) and depth < 2:
        return {k: _real_to_meta(v, depth + 1) for k, v in value.items()}
    return value


# ATen ops whose output size depends on the values (fast mode has none to read).
_DATA_DEPENDENT = ("nonzero", "unique", "_unique", "_unique2", "unique_consecutive",
                   "unique_dim", "masked_select", "repeat_interleave", "bincount", "histc",
                   "_local_scalar_dense", "argwhere")


def _no_meta_kernel(name, func):
    """Why an op cannot run on meta tensors, and what the user can do, by kind of op."""
    namespace = getattr(func, "namespace", "aten")
    base = getattr(func, "__name__", name).split(".")[0]
    if namespace != "aten":
        return (f"{name} is a custom op with no Meta kernel (register one with torch.library, "
                "impl 'Meta')")
    if base in _DATA_DEPENDENT:
        return f"{name} has a data-dependent output shape (fast mode has no values)"
    return (f"{name} has no Meta (shape-only) kernel in this torch and none in xmem's "
            "shape_kernels.py (please report it so a shape-only kernel can be added)")
