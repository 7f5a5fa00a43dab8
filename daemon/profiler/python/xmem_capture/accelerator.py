"""torch.accelerator (PyTorch 2.6+) answering for the one virtual CUDA device.

torch.accelerator's functions call torch._C._accelerator_* directly, which asks the CUDA
driver, and on a login node without a GPU that raises. Yet current scripts pick their device
with `torch.accelerator.current_accelerator()`, and 2.x optimizers call
`torch.accelerator.current_stream().is_capturing()` inside every step(). So each function
answers what the torch.cuda stand-in (cuda_shim.py) answers: both APIs agree, and memory
statistics are the traced device bytes in either.
"""
import contextlib

import xmem_patches as patches

_SUPPORTED_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128",
                     "int8", "uint8", "int16", "int32", "int64", "bool")


class _device_index(contextlib.nullcontext):
    """torch.accelerator.device_index(i): there is one device, so nothing to switch."""

    def __init__(self, device=None, /):
        super().__init__()


def _functions(torch_mod, cuda):
    """torch.accelerator's public names -> stand-ins, from CUDA (cuda_shim's name -> function)."""
    device = torch_mod.device("cuda")
    dtypes = {getattr(torch_mod, name) for name in _SUPPORTED_DTYPES}
    return {
        "current_accelerator": lambda check_available=False: device,
        "is_available": lambda: True,
        "device_count": cuda["device_count"],
        "current_device_index": cuda["current_device"],
        "current_device_idx": cuda["current_device"],
        "set_device_index": lambda device=None, /: None,
        "set_device_idx": lambda device=None, /: None,
        "device_index": _device_index,
        "get_device_capability": lambda device=None, /: {"supported_dtypes": set(dtypes)},
        "current_stream": lambda device=None, /: cuda["current_stream"](),
        "set_stream": lambda stream: None,
        "synchronize": lambda device=None, /: None,
        "empty_cache": cuda["empty_cache"],
        "empty_host_cache": lambda: None,
        "get_memory_info": lambda device=None, /: cuda["mem_get_info"](),
        "memory_stats": lambda device=None, /: cuda["memory_stats"](),
        "memory_allocated": lambda device=None, /: cuda["memory_allocated"](),
        "max_memory_allocated": lambda device=None, /: cuda["max_memory_allocated"](),
        "memory_reserved": lambda device=None, /: cuda["memory_reserved"](),
        "max_memory_reserved": lambda device=None, /: cuda["max_memory_reserved"](),
        "reset_peak_memory_stats": lambda device=None, /: cuda["reset_peak_memory_stats"](),
        "reset_accumulated_memory_stats": lambda device=None, /: None,
    }


def install(torch_mod, cuda):
    """Replaces torch.accelerator's functions (and those of its memory submodule, which
    scripts may call by that name); a torch without torch.accelerator is left alone."""
    module = getattr(torch_mod, "accelerator", None)
    if module is None:
        return
    memory = getattr(module, "memory", None)
    for name, function in _functions(torch_mod, cuda).items():
        patches.replace("torch.accelerator." + name, function)
        if memory is not None and hasattr(memory, name):
            patches.replace("torch.accelerator.memory." + name, function)
    random = getattr(module, "random", None)
    if random is not None:  # the CPU generator is the one a capture draws from
        patches.replace("torch.accelerator.random.initial_seed",
                        lambda device=None, /: torch_mod.initial_seed())
        patches.replace("torch.accelerator.random.get_rng_state",
                        lambda device=None, /: torch_mod.get_rng_state())
        patches.replace("torch.accelerator.random.get_rng_state_all",
                        lambda: [torch_mod.get_rng_state()])
