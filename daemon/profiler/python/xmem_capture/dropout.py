"""F.dropout / torch.dropout in training on device tensors, with the memory of the GPU's
native_dropout (xmem_gpu/dropout.py, the rule both captures share).

On the CPU, `dropout` takes `_dropout_impl`: a noise tensor of the input's dtype kept for
backward (4 bytes an element for fp32); the CPU's own native_dropout makes a float mask
before its bool one, and a CPU mul by a bool mask copies it to float first. A GPU keeps a
1-byte bool mask. Here the device gets what the CUDA kernels allocate (the mask, then the
output; in backward one gradient), and the values are computed on the host and copied in,
so no CPU temporary is device memory.
"""
import torch

from . import devices

_FUNCTIONS = (torch.nn.functional.dropout, torch._C._VariableFunctions.dropout)


def _on_host(mode, compute):
    """COMPUTE's temporaries on the host, also where the device mode is active (backward)."""
    with devices.host_scope():
        return mode.run_on(devices.HOST, compute, (), {})


class _NativeDropout(torch.autograd.Function):
    @staticmethod
    def forward(ctx, mode, input, p):
        from xmem_gpu import dropout
        scale = dropout.scale(p)
        output, mask = dropout.native_dropout_buffers(input)  # on the device (run_on GPU)

        def compute():
            keep = torch.empty_like(input).bernoulli_(1.0 - p)
            mask.copy_(keep)
            torch.mul(input, keep, out=output)
            output.mul_(scale)

        _on_host(mode, compute)
        ctx.mode, ctx.scale = mode, scale
        ctx.save_for_backward(mask)
        return output

    @staticmethod
    def backward(ctx, grad):
        from xmem_gpu import dropout
        (mask,) = ctx.saved_tensors
        mode = ctx.mode
        grad_input = mode.run_on(devices.GPU, dropout.native_dropout_backward_buffer, (grad,), {})
        _on_host(mode, lambda: grad_input.copy_(grad * mask * ctx.scale))
        return None, grad_input, None


def _handler(mode, func, args, kwargs):
    from xmem_gpu import dropout
    input, p, train, inplace = dropout.arguments(args, kwargs)
    dev = mode.forced or mode.dev_of_args(args, kwargs)  # DeviceMode's rule for other calls
    if (inplace or dev != devices.GPU or not isinstance(input, torch.Tensor)
            or not dropout.takes_native_dropout(p, train, input.numel())):
        return mode.run_on(dev, func, args, kwargs)
    return mode.run_on(devices.GPU, _NativeDropout.apply, (mode, input, float(p)), {})


def _without_mode(original, args, kwargs):
    mode = devices.mode_for_thread()
    if mode is None:
        return original(*args, **kwargs)
    return _handler(mode, original, args, kwargs)


def install():
    """Routes F.dropout and torch.dropout (what nn.Dropout calls) through the handler, also
    where the device mode is off (checkpointing's recompute in backward)."""
    from xmem_gpu import dropout
    for function in _FUNCTIONS:
        devices.register_special(function, _handler)
    dropout.rebind_functional(torch.nn.functional, _without_mode)
