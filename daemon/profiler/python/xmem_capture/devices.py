"""Makes CUDA device requests run on the CPU and decides which storages a GPU run would put
on the device ('g') or keep on the host ('h').

The allocator wrapper sees sizes, not devices, so the device is decided here, per torch call,
from what the call is given -- the rule a real GPU run follows:

* a factory with device='cuda' (or any CUDA spelling) allocates on the device;
* `.cuda()` / `.to('cuda')` of a host tensor makes a real copy on the device (this also
  reproduces the H2D copy allocation of a GPU run); of a device tensor it is the identity;
* `.cpu()` / `.to('cpu')` / `.pin_memory()` copy to the host;
* any other call allocates where its tensor arguments live: on the device when one of them
  does, on the host otherwise (a factory with no device argument is a host factory);
* inside a host scope (the DataLoader fetching a batch, torch.load before mapping) every
  ordinary call allocates on the host.

A tensor's device is looked up by identity: the capture library remembers the tag of every
live storage, keyed by its base pointer. Device tensors answer `is_cuda == True`,
`device == cuda:0` and `get_device() == 0` to the script, so code that branches on them takes
its GPU path. The mode stack is thread-local, so every thread gets its own mode.
"""
import threading

import torch
import xmem_patches as patches
from torch.overrides import TorchFunctionMode

GPU, HOST = "g", "h"
# The script named a CUDA device: the capture library keeps 'g' even for storages made
# outside any dispatched op (torch.tensor(data, device='cuda')), which are host otherwise.
EXPLICIT_GPU = "G"
_ORD = {GPU: ord("g"), HOST: ord("h"), EXPLICIT_GPU: ord("G")}
_CUDA0 = torch.device("cuda", 0)
_CPU = torch.device("cpu")
# torch._C._TensorBase, named TensorBase from 2.3; fast mode's device boundary uses it too.
TensorBase = getattr(torch._C, "_TensorBase", None) or torch._C.TensorBase


def is_cuda_spec(device):
    """True for 'cuda', 'cuda:1', torch.device('cuda'); ints are handled by the callers."""
    if isinstance(device, torch.device):
        return device.type == "cuda"
    return isinstance(device, str) and (device == "cuda" or device.startswith("cuda:"))


def is_ordinal(device):
    """A bare int names a CUDA device (torch.zeros(3, device=0), t.to(0))."""
    return isinstance(device, int) and not isinstance(device, bool)


def unpinned(kwargs):
    """KWARGS without pin_memory=True: pinned memory is host memory, and pinning needs a
    driver a capture has not (safetensors' load_file(device="cuda") stages through it)."""
    return dict(kwargs, pin_memory=False) if kwargs.get("pin_memory") else kwargs


def getter(name):
    return TensorBase.__dict__[name].__get__


class DeviceMode(TorchFunctionMode):
    """One per thread; `forced` is HOST inside a host scope."""

    def __init__(self, native):
        super().__init__()
        self.native = native
        self.current = GPU  # what the capture library tags this thread's allocations with
        self.forced = None

    # -- device bookkeeping -------------------------------------------------------------
    def dev_of(self, t):
        """GPU or HOST for a tensor; storages the capture never saw (shared memory from
        DataLoader workers, NumPy, allocated before capture) are host memory."""
        try:
            ptr = t.data_ptr()
        except RuntimeError:  # sparse, mkldnn, ...: no plain storage
            return HOST
        if ptr == 0:
            return None  # empty tensor: carries no device information
        base = ptr - t.storage_offset() * t.element_size()
        return GPU if self.native.dev_of(base) == 103 else HOST

    def dev_of_args(self, args, kwargs):
        """GPU when any tensor argument, or a tensor list, is on the device."""
        for a in args:
            if isinstance(a, torch.Tensor):
                d = self.dev_of(a)
            elif isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor):
                d = self._dev_of_list(a)
            else:
                continue
            if d == GPU:
                return GPU
        for a in kwargs.values():
            if isinstance(a, torch.Tensor) and self.dev_of(a) == GPU:
                return GPU
        return HOST

    def _dev_of_list(self, tensors):
        """The device of the first tensor in the list that has a storage. A GPU op's tensor
        lists are all on one device, so one look-up usually answers (foreach lists hold
        hundreds); an empty tensor has no storage to ask, so the next one answers:
        Hugging Face's KV cache starts as `torch.tensor([], device="cuda")` and grows by
        `torch.cat([cache, keys])`, a device tensor kept for backward."""
        for t in tensors:
            d = self.dev_of(t) if isinstance(t, torch.Tensor) else None
            if d is not None:
                return d
        return None

    def run_on(self, dev, func, args, kwargs):
        if dev == self.current:
            return func(*args, **kwargs)
        previous = self.current
        self.current = dev
        self.native.set_dev(_ORD[dev])
        try:
            return func(*args, **kwargs)
        finally:
            self.current = previous
            self.native.set_dev(_ORD[previous])

    # -- the mode ------------------------------------------------------------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        if func in _NO_ALLOC:
            return func(*args, **kwargs)
        special = _SPECIAL.get(func)
        if special is not None:
            return special(self, func, args, kwargs)
        kwargs = unpinned(kwargs)
        dev = None
        device = kwargs.get("device")
        if device is not None:
            if is_cuda_spec(device) or is_ordinal(device):
                kwargs = dict(kwargs, device=_CPU)
                dev = EXPLICIT_GPU
            else:
                dev = HOST
        if self.forced is not None and dev is None:
            dev = self.forced
        if dev is None:
            dev = self.dev_of_args(args, kwargs)
            if dev == GPU and func in _DATA_FACTORIES:
                dev = EXPLICIT_GPU  # builds its storage outside any op, from Python data
        return self.run_on(dev, func, args, kwargs)


# -- special calls ---------------------------------------------------------------------------

def _copy_to(mode, t, dev, dtype=None, memory_format=torch.preserve_format):
    """A real copy of T tagged DEV (what cudaMemcpy into a fresh block is on a GPU)."""
    return mode.run_on(EXPLICIT_GPU if dev == GPU else dev, TensorBase.to, (t,),
                       dict(dtype=dtype or t.dtype, copy=True, memory_format=memory_format))


def _move(mode, t, target, dtype=None, memory_format=torch.preserve_format, copy=False):
    if mode.dev_of(t) in (target, None) and not copy:
        if dtype is None or dtype == t.dtype:
            return t
        return mode.run_on(target, TensorBase.to, (t,), dict(dtype=dtype, memory_format=memory_format))
    return _copy_to(mode, t, target, dtype, memory_format)


def _cuda(mode, func, args, kwargs):
    t = args[0]
    mf = kwargs.get("memory_format", torch.preserve_format)
    return _move(mode, t, GPU, memory_format=mf)


def _cpu(mode, func, args, kwargs):
    mf = kwargs.get("memory_format", torch.preserve_format)
    return _move(mode, args[0], HOST, memory_format=mf)


def _pin_memory(mode, func, args, kwargs):
    return _copy_to(mode, args[0], HOST)


def _to(mode, func, args, kwargs):
    """Tensor.to in its three forms: (dtype, ...), (device, dtype, ...), (other, ...)."""
    t, rest = args[0], list(args[1:])
    kwargs = dict(kwargs)
    copy = bool(kwargs.pop("copy", False))
    kwargs.pop("non_blocking", None)
    if rest and isinstance(rest[0], torch.Tensor):
        other = rest[0]
        return _move(mode, t, mode.dev_of(other) or HOST, dtype=other.dtype, copy=copy)
    if "device" in kwargs:
        device = kwargs["device"]
        kwargs["device"] = _CPU
    elif rest and isinstance(rest[0], (str, torch.device, int)) and not isinstance(rest[0], bool):
        device = rest[0]
        rest[0] = _CPU
    else:
        device = None
    _, dtype, _, memory_format = torch._C._nn._parse_to(*rest, **kwargs)
    if device is None:
        target = mode.dev_of(t) or HOST
    elif is_cuda_spec(device) or is_ordinal(device):
        target = GPU
    else:
        target = HOST
    return _move(mode, t, target, dtype=dtype, memory_format=memory_format or torch.preserve_format,
                 copy=copy)


def _is_cuda(mode, func, args, kwargs):
    return mode.dev_of(args[0]) == GPU


def _is_cpu(mode, func, args, kwargs):
    return mode.dev_of(args[0]) != GPU


def _device(mode, func, args, kwargs):
    return _CUDA0 if mode.dev_of(args[0]) == GPU else _CPU


def _get_device(mode, func, args, kwargs):
    return 0 if mode.dev_of(args[0]) == GPU else -1


def _parse_to(mode, func, args, kwargs):
    """Module.to's argument parsing, a torch function in 2.x: the device stays the one the
    script named (the generic path would rewrite `device='cuda'` to the host), so that
    Tensor.to (_to) moves each parameter across the boundary."""
    return func(*args, **kwargs)


_SPECIAL = {
    torch._C._nn._parse_to: _parse_to,
    TensorBase.cuda: _cuda,
    TensorBase.cpu: _cpu,
    TensorBase.to: _to,
    TensorBase.pin_memory: _pin_memory,
    TensorBase.get_device: _get_device,
    getter("is_cuda"): _is_cuda,
    getter("is_cpu"): _is_cpu,
    getter("device"): _device,
}



def register_special(func, handler):
    """Routes FUNC through HANDLER(mode, func, args, kwargs), as the calls above are: how
    other modules (sdpa.py) give a call the GPU's behaviour."""
    _SPECIAL[func] = handler


# Calls that never allocate a storage (getters, shape queries, views): they skip the device
# lookup, and they are most of the calls a training step makes.
_NO_ALLOC_METHODS = (
    "size", "dim", "numel", "nelement", "stride", "storage_offset", "is_contiguous", "item",
    "tolist", "data_ptr", "element_size", "__len__", "is_floating_point", "is_complex",
    "__index__", "__int__", "__float__", "__bool__", "requires_grad_", "retain_grad",
    "register_hook", "view", "view_as", "squeeze", "unsqueeze", "transpose", "permute", "t",
    "expand", "expand_as", "narrow", "select", "unbind", "chunk", "split", "as_strided",
    "detach", "detach_",
)
_NO_ALLOC = {
    getter(name) for name, v in TensorBase.__dict__.items()
    if type(v).__name__ == "getset_descriptor" and name not in ("is_cuda", "is_cpu", "device")
} | {getattr(TensorBase, name) for name in _NO_ALLOC_METHODS if hasattr(TensorBase, name)}


# Calls that copy Python data into a new storage without a dispatched op; on a device
# tensor they create a device tensor.
_DATA_FACTORIES = {TensorBase.new_tensor}

_local = threading.local()


def mode_for_thread():
    return getattr(_local, "mode", None)


def enter_thread_mode(native):
    """Enters a DeviceMode on the calling thread for the rest of its life."""
    if getattr(_local, "mode", None) is None:
        mode = DeviceMode(native)
        mode.__enter__()
        _local.mode = mode
    return _local.mode


class host_scope:
    """Everything ordinary allocated inside is host memory (DataLoader fetch, torch.load)."""

    def __enter__(self):
        self.mode = mode_for_thread()
        if self.mode is not None:
            self.saved = self.mode.forced
            self.mode.forced = HOST
        return self

    def __exit__(self, *exc):
        if self.mode is not None:
            self.mode.forced = self.saved
        return False


def install_thread_hook(native):
    """New threads (DataLoader pin thread, user threads) get their own mode."""
    original = threading.Thread._bootstrap_inner

    def _bootstrap_inner(self):
        try:
            enter_thread_mode(native)
        except Exception:  # never break the user's thread over capture bookkeeping
            pass
        return original(self)

    patches.replace("threading.Thread._bootstrap_inner", _bootstrap_inner)


def install_storage_resize(native):
    """A device storage's own resize_ (FSDP2 frees an unsharded parameter by resizing its
    storage to 0 bytes and gathers it again by resizing it back) allocates its new block
    outside any op, which the capture library tags as host memory: here it is a device
    block. The CPU's resize_bytes_cpu allocates the new block, copies, then frees the old
    one, the order CUDA's resize_bytes_cuda has, so nothing else changes. A storage resized
    to 0 has no pointer left to look its device up by: it is remembered until it dies."""
    original = torch.UntypedStorage.resize_
    expired, free_ref = torch.UntypedStorage._expired, torch.UntypedStorage._free_weak_ref
    emptied = {}  # storage key -> weak ref: device storages resize_(0) left without a block
    purge_at = 256  # dead storages' entries are dropped when this many have gathered

    def on_device(storage):
        ptr = storage.data_ptr()
        if ptr:
            return native.dev_of(ptr) == _ORD[GPU]
        ref = emptied.get(storage._cdata)
        return ref is not None and not expired(ref)

    def forget_dead():
        nonlocal purge_at
        for key in [k for k, ref in emptied.items() if expired(ref)]:
            free_ref(emptied.pop(key))
        purge_at = 2 * len(emptied) + 256

    def resize_(self, size):
        mode = mode_for_thread()
        if mode is None or not on_device(self):
            return original(self, size)
        out = mode.run_on(EXPLICIT_GPU, original, (self, size), {})
        old = emptied.pop(self._cdata, None)
        if old is not None:
            free_ref(old)
        if self.nbytes() == 0:
            if len(emptied) >= purge_at:
                forget_dead()
            emptied[self._cdata] = self._weak_ref()
        return out

    patches.replace("torch.UntypedStorage.resize_", resize_)


def to_device_tree(obj):
    """Copies every tensor of OBJ to the device, inside dicts (state dicts keep their
    _metadata), lists and tuples: torch.load onto CUDA, DataParallel's scatter."""
    if isinstance(obj, torch.Tensor):
        return obj.cuda()
    if isinstance(obj, dict):
        out = type(obj)((k, to_device_tree(v)) for k, v in obj.items())
        if hasattr(obj, "_metadata"):  # state dicts carry it; load_state_dict needs it
            out._metadata = obj._metadata
        return out
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(to_device_tree(v) for v in obj)
    return obj
