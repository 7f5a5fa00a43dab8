"""`_index_put_impl_` on device tensors, with the temporaries of the GPU's sort
(xmem_gpu/index_put.py, the steps fast mode plays too).

The backward of `x[idx]` (IndexBackward0) calls `_index_put_impl_(accumulate=True)` from
C++, below every torch function, so the rule is a dispatcher kernel: at ADInplaceOrView, the
key between autograd and the CPU kernel that every in-place op passes (it bumps the tensor's
version). For a device tensor it plays the CUDA kernel's allocations and frees on the device,
then redispatches to the CPU kernel, which computes the values, and bumps the version as
ATen's own ADInplaceOrView kernel does. Needs `Library.impl(with_keyset=True)` (torch 2.x);
on 1.13 the CPU's allocations stay as they are.
"""
import inspect
import warnings

import torch

from . import devices

_state = {"lib": None}


def empty(shape, dtype):
    with torch._C.DisableTorchFunction():  # a device allocation whatever mode is active
        return torch.empty(shape, dtype=dtype)


def play(mode, steps):
    """Plays xmem_gpu/index_put.py's form of STEPS on MODE's device: the one way the exact
    capture makes a CUDA kernel's own buffers (this sort's, reduce.py's staging, sdpa.py's)."""
    from xmem_gpu import index_put
    if steps:
        mode.run_on(devices.GPU, index_put.run, (steps, empty), {})


def _kernel(keyset, self, indices, values, accumulate=False, unsafe=False):
    from xmem_gpu import index_put
    mode = devices.mode_for_thread()
    if mode is not None and mode.dev_of(self) == devices.GPU:
        play(mode, index_put.program(self, indices, values, accumulate, unsafe))
    below = keyset & torch._C._after_ADInplaceOrView_keyset
    out = torch.ops.aten._index_put_impl_.default.redispatch(
        below, self, indices, values, accumulate, unsafe)
    torch.autograd.graph.increment_version(self)
    return out


def can_redispatch():
    return (hasattr(torch._C, "_after_ADInplaceOrView_keyset")
            and "with_keyset" in inspect.signature(torch.library.Library.impl).parameters)


def install():
    """Registers the kernel once per process, where this torch can redispatch from Python."""
    if _state["lib"] is not None or not can_redispatch():
        return
    lib = torch.library.Library("aten", "IMPL", "ADInplaceOrView")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
        lib.impl("_index_put_impl_", _kernel, with_keyset=True)
    _state["lib"] = lib  # the registration lives as long as this object
