"""F.scaled_dot_product_attention on device tensors, with the memory of the GPU's kernel.

On a GPU, SDPA runs flash, memory-efficient, cuDNN or math attention, chosen by the
GPU's compute capability, the dtype and the shapes (xmem_gpu/sdpa.py, the one chooser
both captures call). Their memory differs by the T x T attention matrix: math
materialises it (and keeps it for backward), the fused kernels keep only the output and a
float32 logsumexp [B, H, T]. The CPU's own SDPA choice follows CPU rules, so on device
tensors this runs the CPU kernel whose memory matches the GPU's choice:

* math: aten::_scaled_dot_product_attention_math, the same composite a GPU runs (fp16/bf16
  inputs upcast to fp32, the dropout mask materialised);
* flash, efficient, cuDNN: aten::_scaled_dot_product_flash_attention_for_cpu computes the
  values, on the host: its own scratch (per-thread score blocks, and in backward per-thread
  gradient accumulators, hundreds of small buffers a step) is the CPU kernel's, no GPU
  memory. The device gets what the GPU kernel keeps: output and
  fp32 logsumexp [B, H, T], saved for backward; backward's dQ, dK, dV, with flash's own
  scratch (xmem_gpu/flash.py) live while it runs, or the efficient kernel's gradient copy,
  delta and workspace (xmem_gpu/efficient.py). Not reproduced: the efficient kernel pads
  its logsumexp to a multiple of 32 queries, the cuDNN backward kernel's scratch, and
  dropout (the CPU kernel has none; a GPU keeps only a 16-byte RNG state, so
  the CPU runs without dropout and the trace notes it, `M sdpa_dropout`).

Under autocast, q, k and v are cast to the autocast dtype first, as CUDA autocast does; the
chooser sees the dtype the script asked for (fp16 or bf16). Each backend taken is written to
the trace once (`M sdpa_<backend> <reason>`).
"""
import torch

from . import amp, autocast_state, devices, index_put

_noted = set()


def _asked_dtype(dtype):
    """The dtype a GPU run computes in: under autocast the one the script asked for."""
    asked = amp.cuda_autocast_dtype()
    return asked if asked is not None and autocast_state.enabled("cpu") else dtype


def _autocast_inputs(tensors):
    """CUDA autocast casts fp32 q, k, v and a float mask to the reduced dtype before SDPA
    (real copies; a boolean mask stays)."""
    if not autocast_state.enabled("cpu"):
        return tensors
    low = autocast_state.dtype("cpu")
    return [t.to(low) if t is not None and t.dtype == torch.float32 else t for t in tensors]


def _additive_mask(mask, dtype):
    """SDPA turns a boolean mask into an additive one of the query's dtype before any backend
    runs (convert_boolean_attn_mask in ATen's attention.cpp), on a GPU as here."""
    if mask is None or mask.dtype != torch.bool:
        return mask
    return torch.zeros_like(mask, dtype=dtype).masked_fill_(mask.logical_not(), float("-inf"))


def _stand_in(t, dtype):
    """A storage-free tensor with T's geometry and the GPU-side dtype, for the chooser."""
    out = torch.empty_strided(t.shape, t.stride(), dtype=dtype, device="meta")
    return out.requires_grad_(t.requires_grad)


def _choose(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa):
    from xmem_gpu import sdpa as chooser, target
    dtype = _asked_dtype(q.dtype)
    if dtype != q.dtype:
        q, k, v = (_stand_in(t, dtype) for t in (q, k, v))
    return chooser.choose_backend(q, k, v, attn_mask=mask, dropout_p=dropout_p,
                                  is_causal=is_causal, scale=scale, enable_gqa=enable_gqa,
                                  capability=target.capability())


def _arguments(args, kwargs):
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale",
             "enable_gqa")
    defaults = (None, None, None, None, 0.0, False, None, False)
    given = dict(zip(names, args))
    given.update(kwargs)
    return [given.get(n, d) for n, d in zip(names, defaults)]


def _on_device(mode, host_tensors):
    """Device copies of tensors the CPU kernel computed on the host (the GPU's outputs)."""
    def copy():
        return [None if t is None else torch.empty_like(t).copy_(t) for t in host_tensors]
    return mode.run_on(devices.GPU, copy, (), {})


class _FusedAttention(torch.autograd.Function):
    """A fused kernel's memory on the device, the CPU flash kernel's values from the host."""

    @staticmethod
    def forward(ctx, mode, backend, q, k, v, mask, dropout_p, is_causal, scale):
        aten = torch.ops.aten
        out, lse = mode.run_on(devices.HOST, aten._scaled_dot_product_flash_attention_for_cpu,
                               (q, k, v, 0.0, is_causal), {"attn_mask": mask, "scale": scale})
        out, lse = _on_device(mode, [out, lse])
        ctx.mode, ctx.backend, ctx.is_causal, ctx.scale = mode, backend, is_causal, scale
        ctx.dropout_p = dropout_p  # chooses the GPU's backward kernel, whose workspace differs
        # The output last: non-reentrant checkpointing matches saved tensors by position, and
        # its recompute packs a Function's saved outputs after the rest (with out before lse,
        # test 96's Llama LoRA failed with a metadata mismatch).
        ctx.save_for_backward(q, k, v, mask, lse, out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        from xmem_gpu import efficient, flash, sdpa as chooser
        q, k, v, mask, lse, out = ctx.saved_tensors
        mode = ctx.mode
        before = []  # the CUDA kernel's own buffers made before its gradients
        if ctx.backend == chooser.FLASH:
            before = flash.backward_scratch(q, k)
        elif ctx.backend == chooser.EFFICIENT:
            before = efficient.gradient_copy(grad_out)
        scratch = mode.run_on(devices.GPU, lambda: [
            torch.empty(shape, dtype=dtype) for shape, dtype in before], (), {})
        grads = mode.run_on(
            devices.HOST, torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward,
            (grad_out, q, k, v, out, lse, 0.0, ctx.is_causal),
            {"attn_mask": mask, "scale": ctx.scale})
        grads = _on_device(mode, list(grads))
        if ctx.backend == chooser.EFFICIENT:  # delta and the workspace, after the gradients
            index_put.play(mode, efficient.program(q, k, v, ctx.dropout_p))
        del scratch  # the CUDA kernel frees its scratch on return
        return (None, None, *grads, None, None, None, None)


def _run(mode, backend, q, k, v, mask, dropout_p, is_causal, scale, enable_gqa):
    from xmem_gpu import sdpa as chooser
    with torch.autocast("cpu", enabled=False):
        if backend == "math":
            return chooser.math_attention(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa)
        return _FusedAttention.apply(mode, backend, q, k, v, mask, dropout_p, is_causal, scale)


def _note(native, backend, reason, dropout_p):
    key = "sdpa_" + backend
    if key not in _noted:
        _noted.add(key)
        native.meta(key, reason)
    if dropout_p and backend != "math" and "dropout" not in _noted:
        _noted.add("dropout")  # a note, not a warning: the memory is the same
        native.meta("sdpa_dropout", f"{backend} ran without dropout on the CPU; a GPU keeps "
                    "only a 16-byte RNG state for it")


def scaled_dot_product_attention(mode, func, args, kwargs):
    """DeviceMode's handler: device inputs take the GPU's backend; host inputs run as is."""
    q, k, v, mask, dropout_p, is_causal, scale, enable_gqa = _arguments(args, kwargs)
    if mode.dev_of_args((q, k, v), {}) != devices.GPU:
        return mode.run_on(devices.HOST, func, args, kwargs)
    backend, reason = _choose(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa)
    _note(mode.native, backend, reason, dropout_p)

    def run():
        qc, kc, vc, maskc = _autocast_inputs([q, k, v, mask])
        maskc = _additive_mask(maskc, qc.dtype)
        return _run(mode, backend, qc, kc, vc, maskc, dropout_p, is_causal, scale, enable_gqa)

    return mode.run_on(devices.GPU, run, (), {})


def install():
    """Routes F.scaled_dot_product_attention (torch 2.0+) through the handler above."""
    function = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if function is not None:
        devices.register_special(function, scaled_dot_product_attention)
