"""Runs cs336-trace_peak_memory.py, unmodified, without a GPU, under an xmem capture.

That program recorded ../cs336-torch2.6.json.gz on a GPU. It records and dumps a memory
snapshot itself, which needs a CUDA driver: those calls become no-ops here. It imports
einops (for einsum) and pandas (unused); where they are not installed (the project venv),
stand-ins do what einops does: rename the axes to one letter each, in order of first
appearance, and call torch.einsum with that pattern.
"""
import os
import runpy
import string
import sys
import tempfile
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def _einsum(*tensors_and_pattern):
    *tensors, pattern = tensors_and_pattern
    lefts, right = pattern.split("->")
    names = {}

    def compact(side):
        out = ""
        for axis in side.split():
            if axis == "...":
                out += "..."
                continue
            if axis not in names:
                names[axis] = string.ascii_letters[len(names)]
            out += names[axis]
        return out

    left = ",".join(compact(side) for side in lefts.split(","))
    return torch.einsum(left + "->" + compact(right), *tensors)


def _stand_ins():
    try:
        import einops  # noqa: F401
    except ImportError:
        sys.modules["einops"] = types.SimpleNamespace(einsum=_einsum)
    try:
        import pandas  # noqa: F401
    except ImportError:
        sys.modules["pandas"] = types.ModuleType("pandas")


def main():
    _stand_ins()
    memory = torch.cuda.memory
    memory._record_memory_history = lambda *args, **kwargs: None
    memory._dump_snapshot = lambda *args, **kwargs: None
    memory._snapshot = lambda *args, **kwargs: {"segments": []}
    script = os.path.join(HERE, "cs336-trace_peak_memory.py")
    cwd = os.getcwd()
    # It pickles its snapshot into the current directory.
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            runpy.run_path(script, run_name="__main__")
        finally:
            os.chdir(cwd)


if __name__ == "__main__":
    main()
