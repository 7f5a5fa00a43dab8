"""`sum` and `mean` on device tensors, with the staging a GPU's reduction kernel allocates
(xmem_gpu/reduce.py, the steps fast mode plays too).

The engine reduces a broadcast gradient to its input's shape (a bias gradient: `sum_to`) from
C++, below every torch function, so the rule is a dispatcher kernel at ADInplaceOrView, as
index_put.py's: the CPU kernel computes the output first, as the CUDA kernel's output exists
before it runs, then the staging is allocated and freed on the device. Needs
`Library.impl(with_keyset=True)` (torch 2.x); on 1.13 nothing is added.
"""
import warnings

import torch

from . import devices, index_put

_OPS = ("sum", "sum.dim_IntList", "mean", "mean.dim")
_state = {"lib": None}


def _kernel(op):
    def kernel(keyset, self, *args, **kwargs):
        from xmem_gpu import reduce
        below = keyset & torch._C._after_ADInplaceOrView_keyset
        out = op.redispatch(below, self, *args, **kwargs)
        mode = devices.mode_for_thread()
        if mode is not None and mode.dev_of(self) == devices.GPU:
            index_put.play(mode, reduce.program(out, self, *args, **kwargs))
        return out
    return kernel


def install():
    """Registers the kernels once per process, where this torch can redispatch from Python."""
    if _state["lib"] is not None or not index_put.can_redispatch():
        return
    lib = torch.library.Library("aten", "IMPL", "ADInplaceOrView")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
        for name in _OPS:
            base, _, overload = name.partition(".")
            op = getattr(getattr(torch.ops.aten, base), overload or "default")
            lib.impl(name, _kernel(op), with_keyset=True)
    _state["lib"] = lib  # the registration lives as long as this object
