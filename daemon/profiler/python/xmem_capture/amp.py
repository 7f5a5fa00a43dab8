"""Automatic mixed precision on the CPU.

autocast('cuda') becomes CPU autocast in bfloat16: the same 2-byte activations a CUDA fp16
or bf16 run keeps; autocast('cuda', dtype=torch.float32) is what CUDA makes of it, a no-op
(autocast disabled, amp stays off), since fp32 is not a reduced precision. Where CUDA's op
lists differ from CPU's (ops CUDA keeps in fp32, ops only CUDA lowers), cuda_autocast.py
registers CPU kernels that do what CUDA does.

GradScaler: torch 2.3+ (torch.amp.GradScaler) has CPU kernels for
_amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_, so torch's own
GradScaler('cuda') runs as it is, its state on the device: every allocation and the scale
updates of a GPU run. Older torch (1.13) has them only for CUDA; there the GradScaler below
keeps the real allocations (the scale and growth tracker, the scaled loss, inv_scale and
found_inf) and unscales with in-place multiplies, the scale constant.
"""
import torch
import xmem_patches as patches

from . import cuda_autocast as cuda_fp32_ops

_state = {"amp": "off"}
# --what-if amp (what_if.py): called with (dtype, enabled) of each CUDA autocast the script
# builds, it returns what that autocast runs with. None: as written.
script_autocast = None


def amp_mode():
    return _state["amp"]


def cuda_autocast_casts(dtype, enabled):
    """Whether CUDA autocast with this dtype lowers anything: only fp16 and bf16 do (CUDA
    disables autocast for any other dtype, fp32 included). The fast capture asks it too."""
    return bool(enabled) and (dtype is None or dtype in (torch.float16, torch.bfloat16))


def script_cuda_autocast(dtype, enabled):
    """(dtype, enabled) a CUDA autocast built with these runs with: as written, or as --what-if
    amp changes it. Both captures' autocast ask it."""
    if script_autocast is None:
        return dtype, enabled
    return script_autocast(dtype, enabled)


def note_asked(dtype):
    asked = "bf16" if dtype == torch.bfloat16 else "fp16"
    if _state["amp"] == "off":
        _state["amp"] = asked


def cuda_autocast_dtype():
    """The dtype of the CUDA autocast region the script is in (float16 or bfloat16), or None
    outside one: what a GPU computes in, where the CPU computes in bfloat16."""
    return _state.get("cuda_dtype")


def install(torch_mod, note):
    real_autocast = torch_mod.autocast

    class autocast(real_autocast):
        def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
            self._cuda_dtype = None
            self._is_cuda = device_type == "cuda"
            if self._is_cuda:
                dtype, enabled = script_cuda_autocast(dtype, enabled)
                if cuda_autocast_casts(dtype, enabled):
                    self._cuda_dtype = dtype or torch.float16
                    note_asked(self._cuda_dtype)
                    cuda_fp32_ops.install(note)  # CUDA's fp32 op list on top of CPU's
                else:
                    enabled = False  # fp32 on a GPU: nothing is cast, so nothing here either
                device_type, dtype = "cpu", torch.bfloat16
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

        def __enter__(self):
            self._outer_cuda_dtype = _state.get("cuda_dtype")
            if self._is_cuda:
                _state["cuda_dtype"] = self._cuda_dtype
            return super().__enter__()

        def __exit__(self, *exc):
            _state["cuda_dtype"] = self._outer_cuda_dtype
            return super().__exit__(*exc)

    class cuda_autocast(autocast):
        def __init__(self, enabled=True, dtype=torch.float16, cache_enabled=True):
            super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    _install_queries(torch_mod)
    patches.replace("torch.autocast", autocast)
    patches.replace("torch.amp.autocast", autocast)
    patches.replace("torch.amp.autocast_mode.autocast", autocast)
    patches.replace("torch.cuda.amp.autocast", cuda_autocast)
    if hasattr(torch_mod.cuda.amp, "autocast_mode"):
        patches.replace("torch.cuda.amp.autocast_mode.autocast", cuda_autocast)
    note("amp_mapping", "autocast(cuda)->autocast(cpu,bfloat16)")
    if hasattr(torch_mod.amp, "GradScaler"):
        note("grad_scaler", "torch (CPU kernels of the unscale and scale update)")
        return
    patches.replace("torch.cuda.amp.GradScaler", GradScaler)
    if hasattr(torch_mod.cuda.amp, "grad_scaler"):
        patches.replace("torch.cuda.amp.grad_scaler.GradScaler", GradScaler)
    note("grad_scaler", "cpu-unscale-inplace (no non-finite check, scale constant)")


def _install_queries(torch_mod):
    """torch.is_autocast_enabled / get_autocast_dtype for CUDA (2.x; no argument means CUDA)
    answer what the script's CUDA autocast asked, not the (never entered) real CUDA state:
    user code and torch.utils.checkpoint's recomputation read them."""
    if not hasattr(torch_mod, "get_autocast_dtype"):
        return  # torch 1.13: no per-device queries
    enabled, dtype_of = torch_mod.is_autocast_enabled, torch_mod.get_autocast_dtype

    def is_autocast_enabled(device_type="cuda"):
        if device_type == "cuda":
            return cuda_autocast_dtype() is not None and enabled("cpu")
        return enabled(device_type)

    def get_autocast_dtype(device_type):
        if device_type == "cuda" and cuda_autocast_dtype() is not None:
            return cuda_autocast_dtype()
        return dtype_of(device_type)

    patches.replace("torch.is_autocast_enabled", is_autocast_enabled)
    patches.replace("torch.get_autocast_dtype", get_autocast_dtype)
    patches.replace("torch.get_autocast_gpu_dtype", lambda: get_autocast_dtype("cuda"))


class GradScaler:
    """torch.cuda.amp.GradScaler with CPU kernels; the scale never changes."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        if not isinstance(device, str):  # GradScaler(init_scale) in the torch.cuda.amp form
            init_scale, device = device, "cuda"
        self._enabled = enabled
        self._init_scale = init_scale
        self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
        self._growth_interval = growth_interval
        self._scale = None
        self._growth_tracker = None
        self._unscaled = set()

    def is_enabled(self):
        return self._enabled

    def _lazy_init(self):
        if self._scale is None:
            self._scale = torch.full((1,), self._init_scale, dtype=torch.float32, device="cuda")
            self._growth_tracker = torch.full((1,), 0, dtype=torch.int32, device="cuda")

    def scale(self, outputs):
        if not self._enabled:
            return outputs
        self._lazy_init()
        if isinstance(outputs, torch.Tensor):
            return outputs * self._scale.to(dtype=outputs.dtype)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs

    def unscale_(self, optimizer):
        if not self._enabled or id(optimizer) in self._unscaled:
            return
        self._lazy_init()
        inv_scale = self._scale.double().reciprocal().float()
        torch.full((1,), 0.0, dtype=torch.float32, device="cuda")  # found_inf, as on a GPU
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.mul_(inv_scale)
        self._unscaled.add(id(optimizer))

    def step(self, optimizer, *args, **kwargs):
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        self.unscale_(optimizer)
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        self._unscaled.clear()
        if new_scale is not None and self._scale is not None:
            self._scale.fill_(float(new_scale))

    def get_scale(self):
        return float(self._scale.item()) if self._enabled and self._scale is not None else (
            self._init_scale if self._enabled else 1.0)

    def get_growth_factor(self):
        return self._growth_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def get_growth_interval(self):
        return self._growth_interval

    def state_dict(self):
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": 0} if self._enabled else {}

    def load_state_dict(self, state):
        if state:
            self._init_scale = state.get("scale", self._init_scale)
