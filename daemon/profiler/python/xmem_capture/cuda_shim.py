"""A CPU stand-in for the parts of torch.cuda a training script touches.

Queries answer as one GPU would (the name and memory come from XMEM_GPU_NAME /
XMEM_GPU_MEMORY when set, the compute capability from XMEM_GPU_CAPABILITY through
xmem_gpu/target.py); memory statistics come from the capture library's running totals
of device ('g') storages; timing, streams and events work on the host clock; seeding is a
no-op because torch.manual_seed already seeds the CPU generator (and calls
torch.cuda.manual_seed_all, which must not recurse). What cannot work is listed in
docs/capture.md.
"""
import abc
import contextlib
import os
import sys
import time
import types

import torch
import xmem_patches as patches
from xmem_gpu import target

from . import accelerator, devices, eager, memory_record

_GPU_NAME = os.environ.get("XMEM_GPU_NAME", "xmem virtual GPU (CPU capture)")
_GPU_MEMORY = int(os.environ.get("XMEM_GPU_MEMORY", str(80 << 30)))


def _check_capability():
    """A bad XMEM_GPU_CAPABILITY or XMEM_GPU_MULTIPROCESSORS stops the capture before the
    script runs, in one line."""
    try:
        target.capability()
        target.multiprocessors()
    except ValueError as e:
        sys.stderr.write(f"{e}\n")
        os._exit(1)


def _dynamo_bases():
    """The classes torch.cuda.Event and Stream must derive from: torch 2.1-2.5's Dynamo
    asserts they derive from the abstract bases in torch._streambase when it is imported (an
    optimizer's first step imports it). Later releases made those deprecated aliases of the C
    types torch.Event and torch.Stream, and stopped asserting; 1.13 has neither."""
    try:
        from torch import _streambase
    except ImportError:
        return object, object
    if isinstance(_streambase._EventBase, abc.ABCMeta):
        return _streambase._EventBase, _streambase._StreamBase
    return object, object


_EventRoot, _StreamRoot = _dynamo_bases()


class Event(_EventRoot):
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self._t = None

    def record(self, stream=None):
        self._t = time.perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        return (end_event._t - self._t) * 1000.0


class Stream(_StreamRoot):
    def __init__(self, device=None, priority=0, **kwargs):
        self.device = torch.device("cuda", 0)
        self.priority = priority

    def wait_event(self, event):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def query(self):
        return True

    def synchronize(self):
        pass

    def is_capturing(self):
        return False  # no CUDA graph is ever being captured (optimizers ask in step())

    def __eq__(self, other):
        return isinstance(other, Stream)

    def __hash__(self):
        return 0


_DEFAULT_STREAM = Stream()


@contextlib.contextmanager
def _null_context(*args, **kwargs):
    yield


class _Properties(types.SimpleNamespace):
    pass


def _properties(device=None):
    major, minor = target.capability()
    return _Properties(name=_GPU_NAME, total_memory=_GPU_MEMORY, major=major, minor=minor,
                       multi_processor_count=target.multiprocessors() or 108, is_integrated=0, is_multi_gpu_board=0,
                       L2_cache_size=40 << 20, warp_size=32)


def _is_bf16_supported(including_emulation=True):
    """As torch.cuda answers on the target GPU: native from Ampere (8.0) on, emulated before."""
    return target.capability()[0] >= 8 or bool(including_emulation)


def _rank_number(name):
    value = os.environ.get(name, "") if os.environ.get("XMEM_WORLD_SIZE") else ""
    return int(value) if value.isdigit() else None


def node_gpus():
    """GPUs the job sees: one, or one per rank on the node when xmem-estimate profiles a rank
    of a multi-GPU job (XMEM_WORLD_SIZE; LOCAL_WORLD_SIZE as torchrun sets it), so that
    `cuda:{LOCAL_RANK}` names a GPU that exists."""
    return max(1, _rank_number("LOCAL_WORLD_SIZE") or 1)


def rank_gpu():
    """The index of the GPU this process uses: 0, or a rank's LOCAL_RANK (fast mode's device
    tensors answer it, as a rank's tensors on its own GPU do)."""
    return _rank_number("LOCAL_RANK") or 0


def install(torch_mod, native, note):
    """Replaces torch.cuda's device-facing functions. NOTE(key, value) records metadata."""
    _check_capability()
    cuda = torch_mod.cuda

    def memory_allocated(device=None):
        return native.device_bytes()

    def max_memory_allocated(device=None):
        return native.device_peak_bytes()

    def reset_peak(device=None):
        native.reset_device_peak()

    def memory_stats(device=None):
        cur, top = native.device_bytes(), native.device_peak_bytes()
        return {"allocated_bytes.all.current": cur, "allocated_bytes.all.peak": top,
                "reserved_bytes.all.current": cur, "reserved_bytes.all.peak": top}

    def empty_cache():
        native.empty_cache()

    def set_fraction(fraction, device=None):
        native.memory_fraction(fraction)

    def set_rng_state(state, device="cuda"):
        pass

    values = {
        "is_available": lambda: True,
        "is_initialized": lambda: True,
        "init": lambda: None,
        "_lazy_init": lambda: None,
        "device_count": node_gpus,
        "current_device": rank_gpu,
        "set_device": lambda device: None,
        "get_device_name": lambda device=None: _GPU_NAME,
        "get_device_properties": _properties,
        "get_device_capability": lambda device=None: target.capability(),
        "get_arch_list": lambda: ["sm_%d%d" % target.capability()],
        "is_bf16_supported": _is_bf16_supported,
        "is_current_stream_capturing": lambda: False,
        "synchronize": lambda device=None: None,
        "empty_cache": empty_cache,
        "set_per_process_memory_fraction": set_fraction,
        "memory_allocated": memory_allocated,
        "memory_reserved": memory_allocated,
        "max_memory_allocated": max_memory_allocated,
        "max_memory_reserved": max_memory_allocated,
        "reset_peak_memory_stats": reset_peak,
        "reset_max_memory_allocated": reset_peak,
        "reset_max_memory_cached": reset_peak,
        "reset_accumulated_memory_stats": lambda device=None: None,
        "list_gpu_processes": lambda device=None: "",
        "is_tf32_supported": lambda: target.capability()[0] >= 8,
        "memory_stats": memory_stats,
        "mem_get_info": lambda device=None: (_GPU_MEMORY - native.device_bytes(), _GPU_MEMORY),
        "utilization": lambda device=None: 0,
        "manual_seed": lambda seed: None,
        "manual_seed_all": lambda seed: None,
        "seed": lambda: None,
        "seed_all": lambda: None,
        "initial_seed": lambda: torch_mod.initial_seed(),
        "get_rng_state": lambda device="cuda": torch_mod.get_rng_state(),
        "get_rng_state_all": lambda: [torch_mod.get_rng_state()],
        "set_rng_state": set_rng_state,
        "set_rng_state_all": lambda states: None,
        "Event": Event,
        "Stream": Stream,
        "current_stream": lambda device=None: _DEFAULT_STREAM,
        "default_stream": lambda device=None: _DEFAULT_STREAM,
        "stream": _null_context,
        "device": _null_context,
        "device_of": _null_context,
        "StreamContext": _null_context,
    }
    values.update(memory_record.functions(native))
    for name, value in values.items():
        patches.replace("torch.cuda." + name, value)
    memory_record.install(torch_mod, native, values)
    if hasattr(cuda, "nvtx"):
        for name in ("range_push", "range_pop", "mark"):
            patches.replace("torch.cuda.nvtx." + name, lambda *a, **k: None)
        patches.replace("torch.cuda.nvtx.range", _null_context)
    # Argument parsing rejects a fake stream before any torch function mode runs.
    patches.replace("torch.Tensor.record_stream", lambda self, stream: None)
    patches.replace("torch.Generator", Generator)
    # RNNs on CUDA tensors flatten their weights with a CUDA-only kernel (2.x CUDA builds ask
    # it); unflattened weights take the same bytes, and the CPU kernels run the RNN.
    if hasattr(torch_mod, "_use_cudnn_rnn_flatten_weight"):
        patches.replace("torch._use_cudnn_rnn_flatten_weight", lambda: False)
    _install_data_parallel(torch_mod, note)
    accelerator.install(torch_mod, values)
    eager.install(torch_mod, note)


class _GeneratorType(type(torch.Generator)):
    """Generators torch makes itself (torch.default_generator) stay torch.Generator
    instances to isinstance()."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, torch._C.Generator)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, torch._C.Generator)


class Generator(torch._C.Generator, metaclass=_GeneratorType):
    """torch.Generator(device='cuda'): a CPU generator (the capture's tensors are CPU
    tensors underneath) that reports the device the script asked for."""

    def __new__(cls, device="cpu"):
        return super().__new__(cls, "cpu")

    def __init__(self, device="cpu"):
        cuda = devices.is_cuda_spec(device) or devices.is_ordinal(device)
        self._xmem_device = torch.device("cuda", 0) if cuda else torch.device("cpu")

    @property
    def device(self):
        return self._xmem_device


class DataParallel(torch.nn.Module):
    """nn.DataParallel on one (virtual) device: scatter to one device copies host tensor
    inputs to cuda:0 (device inputs stay as they are), then the module runs on them."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = [0]
        self.output_device = 0
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*devices.to_device_tree(inputs), **devices.to_device_tree(kwargs))


def _install_data_parallel(torch_mod, note):
    patches.replace("torch.nn.DataParallel", DataParallel)
    patches.replace("torch.nn.parallel.DataParallel", DataParallel)
