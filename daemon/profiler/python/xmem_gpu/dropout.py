"""`F.dropout` / `nn.Dropout` in training on a GPU, for both captures.

ATen's `dropout` (aten/src/ATen/native/Dropout.cpp) takes the fused kernel when
`train && is_fused_kernel_acceptable(input, p)`: the input is a CUDA tensor, 0 < p < 1 and
it has elements. It then returns `std::get<0>(at::native_dropout(input, p, train))`, whose
CUDA kernel (native_dropout_cuda -> dropout_cuda<bool> in aten/src/ATen/native/cuda/
Dropout.cu) allocates `mask = at::empty_like(self, bool)` and then `ret = at::empty_like(self)`;
autograd keeps the 1-byte mask for backward (`result1` in tools/autograd/derivatives.yaml),
and backward is native_dropout_backward, whose CUDA kernel (dropout_backward_cuda) allocates
one output, `at::empty_like(grad, grad.suggest_memory_format())`.

Everywhere else -- a CPU or meta tensor, p of 0 or 1, eval -- `dropout` takes
`_dropout_impl`: noise = empty_like(input) in the input's dtype, bernoulli_, div_, then
input * noise, the noise kept for backward. That is what both captures would record for a
device tensor without this rule. In-place dropout (`dropout_`), feature dropout
(dropout1d/2d/3d) and alpha dropout take `_dropout_impl` on a GPU too, so they are left as
they are.

This is torch 2.x's code (the 2.6 and 2.14 wheels' `native_dropout` schema and derivative);
the 2019 Dropout.cpp called `_fused_dropout` instead, whose CUDA kernel kept a uint8 mask:
the same byte per element.

`takes_native_dropout` is the one decision; `native_dropout_buffers` and
`native_dropout_backward_buffer` allocate what the CUDA kernels allocate, in their order, on
whatever device the caller's capture is allocating for. Both captures call them.
"""
import torch
import xmem_patches as patches


def arguments(args, kwargs):
    """(input, p, train, inplace) of F.dropout(input, p=0.5, training=True, inplace=False)
    or torch.dropout(input, p, train)."""
    given = dict(zip(("input", "p", "train", "inplace"), args))
    given.update(kwargs)
    train = given.get("train", given.get("training", True))
    return given.get("input"), given.get("p", 0.5), train, given.get("inplace", False)


def takes_native_dropout(p, train, numel):
    """Whether a GPU's `dropout(input, p, train)` runs native_dropout (for a CUDA input)."""
    return bool(train) and 0.0 < p < 1.0 and numel > 0


def scale(p):
    """The factor kept elements are multiplied by: 1 / (1 - p), as native_dropout's."""
    return 1.0 / (1.0 - p)


def native_dropout_buffers(input):
    """(output, mask) as native_dropout_cuda allocates them: the bool mask first, then the
    output, both empty_like the input (its strides kept)."""
    mask = torch.empty_like(input, dtype=torch.bool)
    output = torch.empty_like(input)
    return output, mask


def native_dropout_backward_buffer(grad):
    """The one tensor native_dropout_backward's CUDA kernel allocates: grad's size in the
    memory format grad suggests."""
    return torch.empty_like(grad, memory_format=_suggested_memory_format(grad))


def _suggested_memory_format(t):
    """Tensor::suggest_memory_format, which Python does not expose: channels-last where the
    strides are channels-last and not also contiguous (c10 asks whether the strides are
    "like" channels-last, which these cases agree with), else contiguous."""
    last = {4: torch.channels_last, 5: torch.channels_last_3d}.get(t.dim())
    if last is not None and t.is_contiguous(memory_format=last) and not t.is_contiguous():
        return last
    return torch.contiguous_format


def rebind_functional(functional, without_mode):
    """Rebinds `functional.dropout` (torch.nn.functional, what nn.Dropout and HF models call
    at call time) so that the rule holds where no torch function mode is active: the
    recompute of non-reentrant checkpointing runs inside backward, which `Tensor.backward`'s
    own torch-function dispatch started with the capture's mode off. There the call goes to
    WITHOUT_MODE(original, args, kwargs); where a mode is active it reaches the mode as the
    original F.dropout, as before. Returns the original."""
    original = functional.dropout

    def dropout(input, p=0.5, training=True, inplace=False):
        kwargs = {"p": p, "training": training, "inplace": inplace}
        if torch._C._has_torch_function_unary(input):
            return torch.overrides.handle_torch_function(original, (input,), input, **kwargs)
        return without_mode(original, (input,), kwargs)

    dropout.__name__, dropout.__doc__ = original.__name__, original.__doc__
    patches.replace(functional.__name__ + ".dropout", dropout)
    return original
