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
tracker is `hosting` (parameters and buffers being built: host tensors that cost nothing);
meta storages made from host-meta inputs stay host-meta; outputs a CUDA kernel returns on
the host (attention.py's HOST_OUTPUTS) are host-meta. Only device storages are written. An op's outputs are written in the order it
returns them, or the order its CUDA kernel allocates them in (shape_kernels.ALLOCATION_ORDER).
"""
import os
from itertools import compress

import torch

from torch.utils._python_dispatch import TorchDispatchMode

from . import formulas
from .attention import HOST_OUTPUTS
from .scratch import SCRATCH
from .shape_kernels import ALLOCATION_ORDER, KERNELS

# The tensor's StorageImpl: Tensor._storage() in 1.13, untyped_storage() from 2.0 on.
_storage = getattr(torch.Tensor, "untyped_storage", None) or torch.Tensor._storage
_expired = torch.UntypedStorage._expired
_free_weak_ref = torch.UntypedStorage._free_weak_ref
_CONV_OPS = ("aten::convolution", "aten::convolution_backward")


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
        self.device = {}   # storage key -> [trace id, bytes, weak ref]
        self.host = {}     # storage key -> weak ref (host-meta: parameters before .cuda())
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
        return t.is_meta and _storage(t)._cdata in self.device

    # -- the mode -------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if os.getpid() != self._pid:
            return func(*args, **kwargs)
        self.sweep()
        dev = self._input_device(_arguments(args, kwargs))
        if dev is not None and func is torch.ops.aten._local_scalar_dense.default:
            self.on_unsupported("a GPU value read by Python control flow (bool() or a comparison "
                                "of a GPU tensor)")
        if self.accumulation is not None:
            func = self.accumulation.in_place(func, args, kwargs)
        func = formulas.in_place(func)  # the plain branch of formulas that fill fresh zeros
        scratch = self._scratch(func, dev, args, kwargs)
        kernel = KERNELS.get(func)
        try:
            out = kernel(*args, **kwargs) if kernel is not None else func(*args, **kwargs)
        except NotImplementedError:
            if dev is None:
                raise
            self.on_unsupported(_no_meta_kernel(self._op_name(func), func))
        except RuntimeError:
            if dev != "h" or not _has_real_tensor(args, kwargs):
                raise
            # Host-meta parameters met real host data: the model never went to the GPU.
            self.on_unsupported(f"{self._op_name(func)} mixes the host model with host data: "
                                "the job makes no GPU tensors (a forgotten --cuda flag?); "
                                "the exact capture runs it as it is")
        del scratch  # freed at the next op boundary, as the CUDA kernel frees it on return
        if dev is None:
            dev = "h" if self.hosting else "g"
        hosted = {id(out[i]) for i in HOST_OUTPUTS.get(func, ())}
        order = ALLOCATION_ORDER.get(func)
        for t in (out[i] for i in order) if order else _tensors(out):
            if t.is_meta:
                self._note_output(t, "h" if id(t) in hosted else dev, func)
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

    def _input_device(self, flat):
        """'g' if a meta input is on the device, 'h' if only host-meta ones, None if none."""
        found = None
        for t in flat:
            if t.is_meta:
                key = _storage(t)._cdata
                if key in self.device:
                    return "g"
                found = "h"
        return found

    def _note_output(self, t, dev, func):
        storage = _storage(t)
        key = storage._cdata
        if key in self.device or key in self.host:
            return
        if dev == "h":
            self.host[key] = storage._weak_ref()
            return
        self._record_device(storage, key, self._context(func))

    def adopt(self, t, call):
        """A device storage that no dispatched op showed: torch.tensor(data, device="cuda")
        builds its meta tensor with the Python dispatch keys excluded in torch 2.x. CALL (the
        torch function that named the GPU) is its context."""
        storage = _storage(t)
        key = storage._cdata
        if key not in self.device and key not in self.host:
            self._record_device(storage, key, self.writer.module_path() + "|" + call)

    def _record_device(self, storage, key, context):
        nbytes = storage.nbytes()
        sid = self._next_id
        self._next_id += 1
        ref = storage._weak_ref()
        self.device[key] = (sid, nbytes, ref)
        self._keys.append(key)
        self._refs.append(ref)
        self.writer.alloc(sid, max(nbytes, 1), context)

    def _op_name(self, func):
        name = self._op_names.get(func)
        if name is None:
            name = func._schema.name
            self._op_names[func] = name
        return name

    def _context(self, func):
        inner = self._op_name(func)
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
            for key in compress(self._keys, expired):
                sid, nbytes, ref = self.device.pop(key)
                _free_weak_ref(ref)
                self.writer.free(sid, max(nbytes, 1))
            alive = [not e for e in expired]
            self._keys = list(compress(self._keys, alive))
            self._refs = list(compress(self._refs, alive))
        if self.host:
            for key in [k for k, ref in self.host.items() if _expired(ref)]:
                _free_weak_ref(self.host.pop(key))


def _has_real_tensor(args, kwargs):
    return any(not t.is_meta for t in _arguments(args, kwargs))


# ATen ops whose output size depends on the values (fast mode has none to read).
_DATA_DEPENDENT = ("nonzero", "unique", "_unique", "_unique2", "unique_consecutive",
                   "unique_dim", "masked_select", "repeat_interleave", "bincount", "histc",
                   "_local_scalar_dense", "argwhere")


def _no_meta_kernel(name, func):
    """Why an op cannot run on meta tensors, and what the user can do, by kind of op."""
    namespace = getattr(func, "namespace", "aten")
    base = getattr(func, "__name__", name).split(".")[0]
    if namespace != "aten":
        return (f"{name} is a custom op with no Meta kernel: register one with torch.library "
                "(impl 'Meta'), or run the exact capture (--mode exact)")
    if base in _DATA_DEPENDENT:
        return (f"{name} has a data-dependent output shape (fast mode has no values); "
                "the exact capture (--mode exact) runs it")
    return (f"{name} has no Meta (shape-only) kernel in this torch and none in xmem's "
            "shape_kernels.py: the exact capture (--mode exact) runs it; please report it so "
            "a shape-only kernel can be added")
