"""The fast capture's device boundary and its answers to questions about GPU values.

`.cuda()` / `.to('cuda')` / a factory naming a CUDA device produce meta tensors (the fake
GPU); CPU code stays real. A meta tensor on the device answers `is_cuda`, `device ==
cuda:0`, `get_device() == 0` as on a GPU. What a tensor without data cannot answer is
decided here (docs/fast-mode.md): values read for logging get a placeholder (0), copies to
the host are zeros of the right shape, Python control flow on a GPU value is unsupported.
"""
import types as pytypes

import torch
import xmem_patches as patches
from torch.overrides import TorchFunctionMode

from xmem_capture import autocast_state, cuda_shim
from xmem_capture.devices import is_cuda_spec, is_ordinal, TensorBase, getter, unpinned

from . import attention, values
from .storage_tracker import _tensors, plain_tensors

_META = torch.device("meta")
_CPU = torch.device("cpu")
_GPU = torch.device("cuda", cuda_shim.rank_gpu())


class FastDeviceMode(TorchFunctionMode):
    def __init__(self, tracker, attribution, capability):
        super().__init__()
        self.tracker = tracker
        self.attribution = attribution
        self.capability = capability  # the target GPU's (major, minor): xmem_gpu/target.py
        self.autocast = None  # xmem_fast.autocast.Autocast on torch 2.x (arm.py)
        self.stand_ins = None  # values.StandInWarning (arm.py)

    def _autocast(self, func, policy, args, kwargs):
        """CUDA autocast's casts, attributed to the call that makes them (autocast.py)."""
        previous = self.attribution.call
        self.attribution.call = _call_name(func)
        try:
            return self.autocast.cast(policy, args, kwargs)
        finally:
            self.attribution.call = previous

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        policy = self.autocast.policy(func) if self.autocast is not None else None
        if policy is not None:
            args, kwargs = self._autocast(func, policy, args, kwargs)
        special = _SPECIAL.get(func)
        if special is not None:
            return special(self, args, kwargs)
        device = kwargs.get("device")
        names_gpu = device is not None and (is_cuda_spec(device) or is_ordinal(device))
        if names_gpu:
            kwargs = dict(kwargs, device=_META)
        kwargs = unpinned(kwargs)
        if isinstance(func, pytypes.FunctionType):
            return func(*args, **kwargs)  # Python code (F.multi_head_attention_forward): no op
        if device is not None and _is_meta_spec(device):
            return self.script_meta(func, args, kwargs)
        return self.run_op(func, args, kwargs, names_gpu)

    def script_meta(self, func, args, kwargs):
        """FUNC names the meta device itself (`with torch.device("meta")`, accelerate's
        init_empty_weights): its tensors are the script's meta tensors, on no GPU."""
        self.tracker.scripting = True
        try:
            return self.run_op(func, args, kwargs)
        finally:
            self.tracker.scripting = False

    def run_op(self, func, args, kwargs, names_gpu=False):
        """FUNC's call, its allocations attributed to it; NAMES_GPU: it made device tensors."""
        previous = self.attribution.call
        self.attribution.call = _call_name(func)
        try:
            out = func(*args, **kwargs)
        finally:
            self.attribution.call = previous
        if names_gpu:
            # A wrapper subclass's (DTensor's: FSDP2's to_empty) are the tensors it wraps.
            for t in (p for out_t in _tensors(out) for p in plain_tensors(out_t)):
                if t.is_meta:
                    self.tracker.adopt(t, _call_name(func))
        values.follow(func, args, kwargs, out, self.on_device)
        return out

    # -- the boundary -----------------------------------------------------------------------
    def on_device(self, t):
        return self.tracker.is_device(t)

    def to_device(self, t, dtype=None, memory_format=torch.preserve_format):
        dtype = dtype or t.dtype
        if self.on_device(t):
            if dtype == t.dtype:
                return t
            out = TensorBase.to(t, dtype=dtype)
            values.follow(TensorBase.to, (t,), {"dtype": dtype}, out, self.on_device)
            return out
        if t.is_meta:  # a parameter or buffer built on host-meta: a new device storage
            out = torch.empty_strided(t.size(), t.stride(), dtype=dtype, device=_META)
        else:
            out = TensorBase.to(t, device=_META, dtype=dtype, memory_format=memory_format)
            values.copied_to_device(t, out)
        # On a thread without the storage tracker (transformers loads a checkpoint's
        # tensors to the GPU in a thread pool) no op showed the copy: recorded here.
        self.tracker.adopt(out, "aten::to")
        return out

    def to_host(self, t, dtype=None):
        if not self.on_device(t) and not t.is_meta:
            return t if dtype is None or dtype == t.dtype else TensorBase.to(t, dtype=dtype)
        known = values.value_of(t)
        if known is not None:
            return known.to(dtype or t.dtype, copy=True)
        return torch.zeros(t.size(), dtype=dtype or t.dtype)  # placeholder values


def _call_name(func):
    name = getattr(func, "__name__", None) or str(func)
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
        if name.startswith("i") and name[1:] in ("add", "sub", "mul", "truediv", "and", "or"):
            name = name[1:] + "_"
    return "aten::" + name


def _cuda(mode, args, kwargs):
    return mode.to_device(args[0], memory_format=kwargs.get("memory_format", torch.preserve_format))


def _cpu(mode, args, kwargs):
    return mode.to_host(args[0])


def _to(mode, args, kwargs):
    """Tensor.to(dtype), .to(device, dtype), .to(other)."""
    t, rest = args[0], list(args[1:])
    kwargs = dict(kwargs)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    if rest and isinstance(rest[0], torch.Tensor):
        other = rest[0]
        if mode.on_device(other):
            return mode.to_device(t, other.dtype)
        return mode.to_host(t, other.dtype)
    device = None
    if "device" in kwargs:
        device, kwargs["device"] = kwargs["device"], _CPU
    elif rest and isinstance(rest[0], (str, torch.device, int)) and not isinstance(rest[0], bool):
        device, rest[0] = rest[0], _CPU
    _, dtype, _, memory_format = torch._C._nn._parse_to(*rest, **kwargs)
    memory_format = memory_format or torch.preserve_format
    if device is None:
        if dtype is None or dtype == t.dtype:
            return t
        return TensorBase.to(t, dtype=dtype, memory_format=memory_format)
    if is_cuda_spec(device) or is_ordinal(device):
        return mode.to_device(t, dtype, memory_format)
    if _is_meta_spec(device):
        return mode.script_meta(torch.empty_strided, (t.size(), t.stride()),
                                {"dtype": dtype or t.dtype, "device": _META})
    return mode.to_host(t, dtype)


def _is_meta_spec(device):
    return (device.type if isinstance(device, torch.device) else device) == "meta"


def _placeholder_item(mode, args, kwargs):
    t = _known(mode, args[0])
    if not t.is_meta:
        return TensorBase.item(t)
    return False if t.dtype == torch.bool else (0 if not t.is_floating_point() else 0.0)


def _placeholder_float(mode, args, kwargs):
    t = _known(mode, args[0])
    return 0.0 if t.is_meta else TensorBase.__float__(t)


def _placeholder_int(mode, args, kwargs):
    t = _known(mode, args[0])
    return 0 if t.is_meta else TensorBase.__int__(t)


def _known(mode, t):
    """T's host value when fast mode computed one (values.py), else T itself."""
    known = values.value_of(t)
    if known is None:
        return t
    if values.stood_in(t):
        mode.stand_ins.on_read()
    return known


def _tolist(mode, args, kwargs):
    t = args[0]
    return mode.to_host(t).tolist() if t.is_meta else TensorBase.tolist(t)


def _numpy(mode, args, kwargs):
    t = args[0]
    return mode.to_host(t).numpy() if t.is_meta else TensorBase.numpy(t)


def _format(mode, args, kwargs):
    t, spec = args[0], args[1] if len(args) > 1 else ""
    if t.is_meta and t.dim() == 0:
        return format(_placeholder_item(mode, (t,), {}), spec)
    return torch.Tensor.__format__(t, spec) if not t.is_meta else repr(t)


def _bool(mode, args, kwargs):
    t = args[0]
    if not t.is_meta:
        return TensorBase.__bool__(t)
    value, stood_in = values.branch_value(t)
    if value is None:
        mode.tracker.on_unsupported("bool() of a GPU tensor: Python control flow depends on "
                                    "a value fast mode does not compute")
    if stood_in:
        mode.stand_ins.on_read()
    return TensorBase.__bool__(value)


def _is_cuda(mode, args, kwargs):
    return mode.on_device(args[0])


def _is_cpu(mode, args, kwargs):
    return not args[0].is_meta


def _device(mode, args, kwargs):
    return _GPU if mode.on_device(args[0]) else getter("device")(args[0])


def _get_device(mode, args, kwargs):
    return _GPU.index if mode.on_device(args[0]) else -1


def _scaled_dot_product_attention(mode, args, kwargs):
    """The backend the target GPU takes, not the math path meta tensors would take."""
    if not mode.on_device(args[0]):
        return _SDPA(*args, **kwargs)
    previous = mode.attribution.call
    mode.attribution.call = "aten::scaled_dot_product_attention"
    try:
        with torch._C.DisableTorchFunction():  # its ops are named as parts of this call
            return attention.scaled_dot_product_attention(mode.capability, *args, **kwargs)
    finally:
        mode.attribution.call = previous


def install_recurrent(note):
    """nn.LSTM/GRU/RNN on the device run the layer stack both captures share (xmem_gpu/rnn.py):
    meta tensors would take ATen's other loop, two products a step; the first such call
    writes its warning."""
    from xmem_gpu import rnn
    warning = rnn.WarnOnce(note)

    def recurrent(func):
        def run(mode, args, kwargs):
            if not mode.on_device(args[0]):
                return mode.run_op(func, args, kwargs)
            warning.on_device_call()
            call = rnn.unpacked_call(rnn.kind_of(func), args, kwargs)
            if call is None:
                return mode.run_op(func, args, kwargs)
            previous = mode.attribution.call
            mode.attribution.call = _call_name(func)
            try:
                with torch._C.DisableTorchFunction():  # its ops are named as parts of this call
                    return rnn.layers(*call)
            finally:
                mode.attribution.call = previous
        return run

    for function in rnn.functions(torch):
        _SPECIAL[function] = recurrent(function)


def _dropout(function):
    """F.dropout / torch.dropout on a device tensor in training: native_dropout, the op a
    GPU's `dropout` runs (xmem_gpu/dropout.py); its shape kernel allocates what the CUDA
    kernel does. Meta tensors would take `_dropout_impl`, with a mask of the input's dtype."""
    from xmem_gpu import dropout

    def run(mode, args, kwargs):
        input, p, train, inplace = dropout.arguments(args, kwargs)
        if (not inplace and isinstance(input, torch.Tensor) and mode.on_device(input)
                and dropout.takes_native_dropout(p, train, input.numel())):
            return mode.run_op(torch.native_dropout, (input, float(p), True), {})[0]
        if isinstance(function, pytypes.FunctionType):
            return function(*args, **kwargs)
        return mode.run_op(function, args, kwargs)
    return run


def rebind_dropout(mode):
    """F.dropout by its module-global name, on every torch: torch's own Python callers
    (F.multi_head_attention_forward) and checkpointing's recompute, where no mode is active,
    meet the GPU's native_dropout rule too (xmem_gpu/dropout.py), as in the exact capture."""
    from xmem_gpu import dropout
    dropout.rebind_functional(torch.nn.functional,
                              lambda original, args, kwargs: _SPECIAL[original](mode, args, kwargs))


def rebind_functional(mode):
    """torch's own Python code (F.multi_head_attention_forward) calls
    scaled_dot_product_attention, linear and softmax by their torch.nn.functional names where
    no torch function mode is active: the names themselves are rebound, so every caller that
    looks them up at call time meets the SDPA chooser and CUDA autocast's casts (dropout's
    name: rebind_dropout, on every torch)."""
    if _SDPA is None:
        return

    def scaled_dot_product_attention(*args, **kwargs):
        if not mode.on_device(args[0] if args else kwargs["query"]):
            return _SDPA(*args, **kwargs)
        if mode.autocast is not None and autocast_state.enabled("cuda"):
            args, kwargs = mode._autocast(_SDPA, "lower", args, kwargs)
        return _scaled_dot_product_attention(mode, args, kwargs)

    patches.replace("torch.nn.functional.scaled_dot_product_attention", scaled_dot_product_attention)
    for name in _CALLED_INSIDE_TORCH:
        original = getattr(torch.nn.functional, name)
        patches.replace("torch.nn.functional." + name, _autocasting(mode, original))


# What torch's Python functions call by their module-global names where no mode is active
# (F.multi_head_attention_forward's projections and attention weights): rebound so that CUDA
# autocast's casts (autocast.py) apply there too.
_CALLED_INSIDE_TORCH = ("linear", "softmax")


def _autocasting(mode, original):
    def call(*args, **kwargs):
        if mode.autocast is not None and autocast_state.enabled("cuda"):
            policy = mode.autocast.policy(original)
            if policy is not None:
                args, kwargs = mode._autocast(original, policy, args, kwargs)
        return original(*args, **kwargs)
    call.__name__, call.__doc__ = original.__name__, original.__doc__
    return call


def _parse_to(mode, args, kwargs):
    """Module.to's argument parsing (a torch function in 2.x): its device stays what the
    script named, for Tensor.to (_to above) to move each tensor across the boundary."""
    return torch._C._nn._parse_to(*args, **kwargs)


def _pin_memory(mode, args, kwargs):
    return args[0]  # pinned memory is host memory; the copy is not a device allocation


_SPECIAL = {
    TensorBase.cuda: _cuda,
    TensorBase.cpu: _cpu,
    TensorBase.to: _to,
    TensorBase.pin_memory: _pin_memory,
    TensorBase.item: _placeholder_item,
    TensorBase.__float__: _placeholder_float,
    TensorBase.__int__: _placeholder_int,
    TensorBase.__bool__: _bool,
    TensorBase.tolist: _tolist,
    TensorBase.numpy: _numpy,
    torch.Tensor.__format__: _format,
    TensorBase.get_device: _get_device,
    getter("is_cuda"): _is_cuda,
    getter("is_cpu"): _is_cpu,
    getter("device"): _device,
    torch._C._nn._parse_to: _parse_to,
}
for _function in (torch.nn.functional.dropout, torch._C._VariableFunctions.dropout):
    _SPECIAL[_function] = _dropout(_function)
_SDPA = getattr(torch._C._nn, "scaled_dot_product_attention", None)  # torch 2.x
if _SDPA is not None:
    _SPECIAL[_SDPA] = _scaled_dot_product_attention
