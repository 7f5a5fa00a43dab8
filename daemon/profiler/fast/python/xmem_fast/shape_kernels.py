"""Shape-only kernels for the ops torch has no Meta kernel for (listed in docs/fast-mode.md,
"Missing Meta kernels"): they return empty meta tensors of the sizes the real kernel would
allocate, which is all a memory estimate needs. One data-dependent op gets an upper bound instead of a
fall back (masked_select, below). On torch 2.x batch norm gets one too, for speed: torch's
Meta kernel is a Python decomposition, about 1 ms a call."""
import torch

aten = torch.ops.aten


def _empty_like(t):
    return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device="meta")


def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    grad_input = _empty_like(input) if output_mask[0] else None
    grad_weight = _empty_like(weight) if output_mask[1] else None
    grad_bias = None
    if output_mask[2]:
        channels = weight.size(1) * groups if transposed else weight.size(0)
        grad_bias = torch.empty((channels,), dtype=grad_output.dtype, device="meta")
    return grad_input, grad_weight, grad_bias


def same_as_input(grad_output, input, *rest, **kwargs):
    return torch.empty(input.size(), dtype=input.dtype, device="meta")


def masked_select_upper_bound(self, mask):
    """Data-dependent: the result has one element per true mask entry. Upper bound: every
    entry true, which is exact in its common use (cross_entropy with label smoothing selects
    the non-ignored targets, usually all of them). docs/fast-mode.md."""
    numel = torch.broadcast_shapes(self.shape, mask.shape).numel()
    return torch.empty((numel,), dtype=self.dtype, device="meta")


def _accumulate_dtype(dtype):
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """The outputs torch 2.x's Meta kernel returns (checked over dtypes, memory formats,
    eval and train, with and without affine and running stats): the output like the input,
    and the per-channel mean and inverse std in the accumulation dtype, in eval too."""
    channels = input.size(1)
    dtype = _accumulate_dtype(input.dtype)
    return (torch.empty_like(input), torch.empty((channels,), dtype=dtype, device="meta"),
            torch.empty((channels,), dtype=dtype, device="meta"))


def batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                        save_invstd, train, eps, output_mask):
    """As torch 2.x's Meta kernel: grad_input always, grad_weight and grad_bias as asked, in
    the weight's dtype."""
    channels = input.size(1)
    dtype = weight.dtype if weight is not None else input.dtype

    def per_channel(asked):
        return torch.empty((channels,), dtype=dtype, device="meta") if asked else None

    return torch.empty_like(input), per_channel(output_mask[1]), per_channel(output_mask[2])


def in_place_update(*args, **kwargs):
    """A fused optimizer step (2.x `_fused_sgd_`, `_fused_adagrad_`): its CUDA kernel updates
    the parameters and states in place and allocates nothing."""
    return None


KERNELS = {
    aten.masked_select.default: masked_select_upper_bound,
    aten.convolution_backward.default: convolution_backward,
    aten._adaptive_avg_pool2d_backward.default: same_as_input,
}
for _name in ("_fused_sgd_", "_fused_adagrad_"):  # torch 2.x; Meta kernels missing in 2.14
    for _overload in ("default", "tensor_lr"):
        _op = getattr(getattr(aten, _name, None), _overload, None)
        if _op is not None:
            KERNELS[_op] = in_place_update
if int(torch.__version__.split(".")[0]) >= 2:  # 1.13's traces stay as they are (tests 70-78)
    KERNELS[aten.native_batch_norm.default] = batch_norm
    KERNELS[aten.native_batch_norm_backward.default] = batch_norm_backward
