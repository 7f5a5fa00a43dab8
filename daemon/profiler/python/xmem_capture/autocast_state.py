"""Autocast's state for one device type, on every torch 2.x: torch 2.4 gave
torch.is_autocast_enabled and get_autocast_dtype their device argument; before, they were
CUDA's (no argument) and the CPU had functions of its own."""
import torch


def enabled(device_type):
    try:
        return torch.is_autocast_enabled(device_type)
    except TypeError:  # torch < 2.4
        if device_type == "cpu":
            return torch.is_autocast_cpu_enabled()
        return torch.is_autocast_enabled()


def dtype(device_type):
    if hasattr(torch, "get_autocast_dtype"):
        return torch.get_autocast_dtype(device_type)
    if device_type == "cpu":
        return torch.get_autocast_cpu_dtype()
    return torch.get_autocast_gpu_dtype()
