"""Shape-only kernels for the ops torch has no Meta kernel for (listed in docs/fast-mode.md,
"Missing Meta kernels"): they return empty meta tensors of the sizes the real kernel would
allocate, which is all a memory estimate needs. One data-dependent op gets an upper bound instead of a
fall back (masked_select, below). On torch 2.x batch norm gets one too, for speed: torch's
Meta kernel is a Python decomposition, about 1 ms a call. native_dropout and its backward get
the CUDA kernels' allocations, the rule both captures share (xmem_gpu/dropout.py)."""
import math

import torch

from xmem_gpu import dropout

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


def native_dropout(input, p, train):
    """What native_dropout's CUDA kernel allocates in training (xmem_gpu/dropout.py): a bool
    mask, then the output (ALLOCATION_ORDER). Fast mode calls it only in training."""
    return dropout.native_dropout_buffers(input)


def native_dropout_backward(grad_output, mask, scale):
    return dropout.native_dropout_backward_buffer(grad_output)


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


def _rng_state():
    """The RNG seed or offset a fused attention kernel returns (an int64 scalar up to 2.5)."""
    return torch.empty((), dtype=torch.long, device="meta")


def flash_attention(query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False,
                    scale=None):
    """The outputs later releases' own Meta kernel gives (torch 2.4 has none): the output like
    the query, an fp32 logsumexp [B, H, Lq], the sequence lengths and the RNG state. The debug
    mask, a testing aid, stays empty."""
    batch, heads, lq = query.shape[:3]
    logsumexp = torch.empty((batch, heads, lq), dtype=torch.float32, device="meta")
    debug_mask = torch.empty(0, dtype=query.dtype, device="meta")
    return (torch.empty_like(query), logsumexp, None, None, lq, key.size(2), _rng_state(),
            _rng_state(), debug_mask)


def efficient_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0,
                        is_causal=False, scale=None):
    """As later releases' Meta kernel (torch 2.4 has none): the output [B, Lq, H, Ev] seen as
    [B, H, Lq, Ev], the logsumexp padded to a multiple of 32 queries, the RNG state."""
    batch, heads, lq = query.shape[:3]
    out = torch.empty((batch, lq, heads, value.size(-1)), dtype=query.dtype, device="meta")
    lse_len = math.ceil(lq / 32) * 32 if compute_log_sumexp else 0
    logsumexp = torch.empty((batch, heads, lse_len), dtype=torch.float32, device="meta")
    return out.transpose(1, 2), logsumexp, _rng_state(), _rng_state()


def foreach(name):
    """A `_foreach_*` op without a Meta kernel (torch 2.1-2.3 have none): the in-place forms
    allocate nothing, as the CUDA kernels' fast path; the others one result per tensor of the
    first list, 0-d for the norm."""
    def kernel(*args, **kwargs):
        if name.endswith("_"):
            return None
        tensors = next(a for a in args if isinstance(a, (list, tuple)))
        if name == "_foreach_norm":
            return [torch.empty((), dtype=kwargs.get("dtype") or t.dtype, device="meta")
                    for t in tensors]
        return [torch.empty_like(t) for t in tensors]
    return kernel


def in_place_update(*args, **kwargs):
    """A fused optimizer step (2.x `_fused_sgd_`, `_fused_adagrad_`): its CUDA kernel updates
    the parameters and states in place and allocates nothing."""
    return None


def _runs_on_meta(qualified):
    """Whether this torch runs the op on meta tensors by itself: a Meta kernel, or a composite
    one made of ops that have them (the foreach ops' slow path, from 2.4 on)."""
    return any(torch._C._dispatch_has_kernel_for_dispatch_key(qualified, key)
               for key in ("Meta", "CompositeExplicitAutograd"))


def _foreach_ops():
    """(qualified name, op, name) of every `_foreach_*` overload this torch has."""
    for qualified in torch._C._dispatch_get_all_op_names():
        name, _, overload = qualified.partition(".")
        if name.startswith("aten::_foreach_"):
            name = name[len("aten::"):]
            op = getattr(getattr(aten, name, None), overload or "default", None)
            if op is not None:
                yield qualified, op, name


# Ops whose CUDA kernel allocates its outputs in another order than it returns them: the
# positions, in allocation order, for the tracker to write them in.
ALLOCATION_ORDER = {aten.native_dropout.default: (1, 0)}  # the mask, then the output

KERNELS = {
    aten.masked_select.default: masked_select_upper_bound,
    aten.convolution_backward.default: convolution_backward,
    aten._adaptive_avg_pool2d_backward.default: same_as_input,
    aten.native_dropout.default: native_dropout,
    aten.native_dropout_backward.default: native_dropout_backward,
}
for _name in ("_fused_sgd_", "_fused_adagrad_"):  # torch 2.x; Meta kernels missing in 2.14
    for _overload in ("default", "tensor_lr"):
        _op = getattr(getattr(aten, _name, None), _overload, None)
        if _op is not None:
            KERNELS[_op] = in_place_update
# Where this torch has no Meta kernel of its own (2.4 lacks these; 2.14 has them, and they
# are used): the fused attention forwards, and the fused Adam steps (in place on a GPU too).
for _name, _kernel in (("_scaled_dot_product_flash_attention", flash_attention),
                       ("_scaled_dot_product_efficient_attention", efficient_attention),
                       ("_fused_adam_", in_place_update), ("_fused_adamw_", in_place_update)):
    _op = getattr(getattr(aten, _name, None), "default", None)
    if _op is not None and not _runs_on_meta(_op.name()):
        KERNELS[_op] = _kernel
if int(torch.__version__.split(".")[0]) >= 2:  # 1.13 keeps its own (tests 70-78)
    # 1.13 refuses foreach in fast mode (test 78); 2.1-2.3 get kernels. One op tells whether
    # the scan over every op name (about 20 ms) is needed.
    if not _runs_on_meta("aten::_foreach_add_.Scalar"):
        for _qualified, _op, _name in _foreach_ops():
            if not _runs_on_meta(_qualified):
                KERNELS[_op] = foreach(_name)
    KERNELS[aten.native_batch_norm.default] = batch_norm
    KERNELS[aten.native_batch_norm_backward.default] = batch_norm_backward
