"""torch.compile runs the model eagerly under a capture, and the estimate says so.

Compiling traces the model with TorchDynamo and generates Triton kernels for CUDA tensors,
which needs a GPU; the capture's device tensors are CPU tensors underneath. So
`torch.compile(model)` (any form: call, decorator, decorator factory) and `Module.compile()`
return or leave the model as it is, and the first such call writes a warning into the trace:
the estimate is the eager model's memory, usually somewhat above a compiled run's (fused
kernels keep fewer intermediates).
"""
import xmem_patches as patches

WARNING = ("torch.compile ran eagerly: the estimate is the eager model's memory, usually "
           "somewhat above a compiled run's (fused kernels keep fewer intermediates)")


def install(torch_mod, note):
    """Replaces torch.compile and nn.Module.compile (torch 2.x); NOTE(key, value) records."""
    if not hasattr(torch_mod, "compile"):
        return
    warned = []

    def warn():
        if not warned:
            warned.append(True)
            note("warning_compile", WARNING)

    def compile(model=None, *args, **kwargs):
        warn()
        if model is None:  # @torch.compile(mode=...) : a decorator factory
            return lambda function: function
        return model

    def module_compile(self, *args, **kwargs):
        warn()

    patches.replace("torch.compile", compile)
    if hasattr(torch_mod.nn.Module, "compile"):
        patches.replace("torch.nn.Module.compile", module_compile)
