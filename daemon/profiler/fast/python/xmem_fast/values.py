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
_ATTR = "_xmem_value"
_KINDS = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def value_of(t):
    """The host value of device tensor T, or None."""
    return getattr(t, _ATTR, None) if isinstance(t, torch.Tensor) else None


def remember(t, value):
    """Keeps VALUE (a host tensor) as T's, when T is worth a value; else forgets T's."""
    if (_disable_current_modes is not None and isinstance(value, torch.Tensor) and
            t.dtype in _KINDS and t.numel() <= LIMIT and value.shape == t.shape):
        setattr(t, _ATTR, value)
    else:
        forget(t)


def forget(t):
    if isinstance(t, torch.Tensor) and hasattr(t, _ATTR):
        delattr(t, _ATTR)


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
    if any(value_of(t) is None for t in inputs):
        for t in outs:
            forget(t)
        return
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
            remember(t, v)


# The answers of the finite-numbers assumption, by function.
_FINITE = {torch.isnan: False, torch.isinf: False, torch.isposinf: False,
           torch.isneginf: False, torch.isfinite: True, torch.Tensor.isnan: False,
           torch.Tensor.isinf: False, torch.Tensor.isposinf: False,
           torch.Tensor.isneginf: False, torch.Tensor.isfinite: True}


def _host(x):
    """An argument as the host computation takes it: a GPU tensor's value, the host for a
    device argument."""
    if isinstance(x, torch.Tensor):
        value = value_of(x)
        return value if value is not None else x
    if isinstance(x, torch.device) and x.type == "meta":
        return torch.device("cpu")
    return x
