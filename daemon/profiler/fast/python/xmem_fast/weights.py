"""After the first step: are the weights on the GPU in the trace?

A model's weights reach the GPU in many ways (`.cuda()`, `from_pretrained(device_map=...)`
loading in a thread pool, accelerate's dispatch, `to_empty`, `load_state_dict(assign=True)`,
safetensors, `torch.load(map_location=...)`). One fast mode does not trace leaves parameters
that are meta tensors but no device storage, and the estimate silently under the job's
needs. So when the first step ends, the trace's live device bytes must be at least the bytes
of the parameters on the GPU; if they are not, fast mode refuses (the exact capture runs the
job for real). Parameters on the GPU: every nn.Parameter that is a meta tensor and not a host
stand-in (a parameter before `.cuda()`) or the script's own meta tensor.
"""
import gc

import torch

from .storage_tracker import _storage, plain_tensors


class WeightsCheck:
    """A Tracker observer (xmem_capture/phases.py): checks once, when step 1 ends."""

    def __init__(self, tracker, refuse):
        self.tracker = tracker
        self.refuse = refuse

    def phase(self, name):
        pass

    def training_forward(self, module):
        pass

    def step_finished(self, n):
        if n != 1:
            return
        with torch._C.DisableTorchFunction():
            gap = self.untraced()
        if gap is not None:
            self.refuse(gap)

    def untraced(self):
        """Why the trace lacks weights on the GPU, or None when it has them."""
        tracker = self.tracker
        on_gpu, missing = {}, {}
        for p in (t for param in _parameters() for t in plain_tensors(param)):
            if not p.is_meta:
                continue
            storage = _storage(p)
            key = storage._cdata
            if key in tracker.host or key in tracker.script_meta:
                continue
            on_gpu[key] = storage.nbytes()
            if key not in tracker.device:
                missing[key] = tuple(p.shape)
        live = tracker.device_bytes()
        weights = sum(on_gpu.values())
        if not missing and live >= weights:
            return None
        if missing:
            lost = sum(on_gpu[k] for k in missing)
            shape = list(next(iter(missing.values())))
            return (f"weights missing from the trace: {len(missing)} parameter(s) on the GPU "
                    f"({lost} B, e.g. one of shape {shape}) got there in a way fast mode does "
                    "not trace")
        return (f"weights missing from the trace: after the first step it holds {live} B on "
                f"the GPU, less than the {weights} B of parameters there")


def _parameters():
    """Every parameter of every live nn.Module, each once. (Tensors themselves are not
    always tracked by the garbage collector; modules, with their __dict__, are.)"""
    module = torch.nn.Module
    seen = {}
    for o in gc.get_objects():
        if issubclass(type(o), module):
            for p in o.__dict__.get("_parameters", {}).values():
                if p is not None:
                    seen[id(p)] = p
    return list(seen.values())
