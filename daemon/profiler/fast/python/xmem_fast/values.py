"""Known values of small integer and boolean GPU tensors, so Python control flow on them runs.

Fast mode's GPU tensors are meta tensors: no data. Most control flow on GPU values is about
indices, not activations: Hugging Face's mask code asks `(packed_sequence_mask[:, -1] ==
0).all()` of position ids built by `torch.arange(..., device="cuda")`, and a loop may ask
whether any label is padding. Such tensors are small and integer or boolean, so fast mode
also computes their value on the host, beside the meta tensor: a factory naming the GPU,
a copy of host data to the GPU, and any op whose GPU inputs all have a value. `bool()`,
`.item()` and `.tolist()` of such a tensor then answer with the value a GPU run would
compute. A tensor without a value (an activation, anything past LIMIT elements, a float)
keeps today's rule: its placeholder, or "unsupported" for control flow. One assumption is
added: numbers are finite, so `isnan`/`isinf` are False and `isfinite` True of any tensor
(the Hugging Face Trainer skips a step whose loss is not finite; GradScaler in fast mode
already takes "no inf found").

A floating-point scalar on the device (a loss, a gradient norm, Adafactor's RMS) has no
value, yet Python branches on it: `max(eps, state["RMS"])`, `if total_norm > limit:`. Such a
scalar stands in as STAND_IN (0.0, the placeholder `.item()` already reads) when a branch
needs it, the comparison's answer is computed from it, and the first answer read gives the
estimate one warning line (`warning_stand_in`). What it is assumed: the branch taken does
not change what the GPU allocates. A larger float tensor, or an answer that decides a shape
(`nonzero`, a boolean mask) is refused as before.

The values are host tensors that no trace records (the dispatch modes are off while they are
computed): they cost the login node a little CPU, never the estimate a byte.
"""
import torch
from torch.utils._pytree import tree_flatten, tree_map

try:  # torch 2.x; torch 1.13 keeps the placeholder rules alone
    from torch.utils._python_dispatch import _disable_current_modes
except ImportError:  # pragma: no cover
    _disable_current_modes = None

LIMIT = 1 << 16  # elements: batch x sequence position ids and masks, not activations
STAND_IN = 0.0  # a device float scalar's value where a branch needs one
_ATTR = "_xmem_value"
_STOOD_IN = "_xmem_stood_in"  # the value was computed from a stand-in
_KINDS = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def value_of(t):
    """The host value of device tensor T, or None."""
    return getattr(t, _ATTR, None) if isinstance(t, torch.Tensor) else None


def remember(t, value, from_stand_in=False):
    """Keeps VALUE (a host tensor) as T's, when T is worth a value; else forgets T's.
    FROM_STAND_IN: VALUE was computed from a stand-in."""
    if (_disable_current_modes is not None and isinstance(value, torch.Tensor) and
            t.dtype in _KINDS and t.numel() <= LIMIT and value.shape == t.shape):
        setattr(t, _ATTR, value)
        if from_stand_in:
            setattr(t, _STOOD_IN, True)
        elif hasattr(t, _STOOD_IN):
            delattr(t, _STOOD_IN)
    else:
        forget(t)


def forget(t):
    if isinstance(t, torch.Tensor):
        for attr in (_ATTR, _STOOD_IN):
            if hasattr(t, attr):
                delattr(t, attr)


def stood_in(t):
    """Whether T's value was computed from a stand-in."""
    return getattr(t, _STOOD_IN, False)


def may_stand_in(t):
    """Whether device tensor T, which has no value, takes the stand-in: a float scalar."""
    return t.is_floating_point() and t.numel() == 1


def branch_value(t):
    """What bool() of device tensor T reads: (host value, whether a stand-in decided it),
    or (None, False) when T has neither a value nor a stand-in."""
    value = value_of(t)
    if value is not None:
        return value, stood_in(t)
    if t.is_meta and may_stand_in(t):
        return torch.full(t.shape, STAND_IN, dtype=t.dtype), True
    return None, False


class StandInWarning:
    """Writes the one warning line the first time Python reads an answer a stand-in decided;
    WHERE() names the script line that read it."""

    KEY = "warning_stand_in"

    def __init__(self, note, where):
        self._note, self._where = note, where
        self._written = False

    def on_read(self):
        if self._written:
            return
        self._written = True
        self._note(self.KEY, "fast mode: Python branched on a floating-point GPU value"
                   f"{self._where()}, which fast mode does not compute; it stood in as "
                   f"{STAND_IN}, and so did every later one (the branch is assumed not to "
                   "change what the GPU allocates; --mode exact computes the real value)")


def copied_to_device(host, device_tensor):
    """A host tensor copied to the GPU: the copy's value is the host data."""
    if (_disable_current_modes is not None and device_tensor.dtype in _KINDS and
            device_tensor.numel() <= LIMIT):
        with torch.no_grad(), _disable_current_modes():
            remember(device_tensor, host.detach().to(device_tensor.dtype).clone())


def follow(func, args, kwargs, out, on_device):
    """After FUNC made OUT on the GPU: computes OUT's value on the host when every GPU input
    has one (a factory has none), and forgets values it cannot recompute (an in-place op on a
    tensor with a value, from an input without one)."""
    outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and on_device(t)]
    if not outs or _disable_current_modes is None:
        return
    if not any(t.dtype in _KINDS and t.numel() <= LIMIT for t in outs):
        for t in outs:
            forget(t)
        return
    finite = _FINITE.get(func)
    if finite is not None:
        for t in outs:
            remember(t, torch.full(t.shape, finite, dtype=torch.bool))
        return
    inputs = [t for t in tree_flatten((args, kwargs))[0]
              if isinstance(t, torch.Tensor) and on_device(t)]
    missing = [t for t in inputs if value_of(t) is None]
    if not all(may_stand_in(t) for t in missing):
        for t in outs:
            forget(t)
        return
    from_stand_in = bool(missing) or any(stood_in(t) for t in inputs)
    host_args, host_kwargs = tree_map(_host, (args, kwargs))
    try:
        with torch.no_grad(), _disable_current_modes():
            computed = func(*host_args, **host_kwargs)
    except Exception:  # a value fast mode cannot compute is a value it does not have
        computed = None
    pairs = zip(tree_flatten(out)[0], tree_flatten(computed)[0] if computed is not None
                else [None] * len(tree_flatten(out)[0]))
    for t, v in pairs:
        if isinstance(t, torch.Tensor) and on_device(t):
            remember(t, v, from_stand_in)


# The answers of the finite-numbers assumption, by function.
_FINITE = {torch.isnan: False, torch.isinf: False, torch.isposinf: False,
           torch.isneginf: False, torch.isfinite: True, torch.Tensor.isnan: False,
           torch.Tensor.isinf: False, torch.Tensor.isposinf: False,
           torch.Tensor.isneginf: False, torch.Tensor.isfinite: True}


def _host(x):
    """An argument as the host computation takes it: a GPU tensor's value, the host for a
    device argument."""
    if isinstance(x, torch.Tensor):
        value = branch_value(x)[0]  # its value, or a float scalar's stand-in
        return value if value is not None else x
    if isinstance(x, torch.device) and x.type == "meta":
        return torch.device("cpu")
    return x
