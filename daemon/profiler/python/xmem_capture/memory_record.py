"""The memory records a script takes of itself, under either capture: torch.cuda's
`memory_summary` and `memory_snapshot`, and torch.cuda.memory's `_record_memory_history`,
`_snapshot` and `_dump_snapshot`, which memory-profiling scripts call first and last thing.

There is no CUDA allocator in the job's process to record: the one xmem simulates replays
the trace after the job has ended (`xmem estimate --timeline` draws it). So they answer from
what the capture counts while the job runs, its live and peak device bytes, and are no-ops
for the rest (docs/capture.md, "A script's own memory records"):
* `_record_memory_history(...)` records nothing: the capture keeps no stacks per block;
* `_snapshot()` has torch's layout with no segments and one empty trace for the one device,
  and the capture's counts under `xmem`; `memory_snapshot()` is its segments, `[]`;
* `_dump_snapshot(path)` pickles that snapshot, so torch's memory_viz loads the file;
* `memory_summary()` is a short table of the current and peak device bytes.
"""
import pickle

import xmem_patches as patches

_NOTE = ("no CUDA allocator runs under xmem's capture: segments and traces are empty; "
         "`xmem estimate --timeline` shows the simulated allocator's")


def _snapshot_of(native):
    return {
        "segments": [],
        "device_traces": [[]],
        "allocator_settings": {},
        "xmem": {"allocated_bytes": native.device_bytes(),
                 "peak_allocated_bytes": native.device_peak_bytes(), "note": _NOTE},
    }


def _summary_of(native):
    current, peak = native.device_bytes(), native.device_peak_bytes()
    return ("|  xmem capture: device memory (the capture's counts; no CUDA allocator)  |\n"
            f"|  allocated bytes, current: {current:>20,}                    |\n"
            f"|  allocated bytes, peak:    {peak:>20,}                    |\n")


def functions(native):
    """torch.cuda's names for the records, to join the CUDA stand-in's table."""
    return {
        "memory_summary": lambda device=None, abbreviated=False: _summary_of(native),
        "memory_snapshot": lambda *args, **kwargs: [],
    }


def install(torch_mod, native, cuda):
    """Replaces torch.cuda.memory's private record functions, and its public ones by the
    CUDA stand-in's table CUDA (a script may call them by the submodule's name)."""
    memory = getattr(torch_mod.cuda, "memory", None)
    if memory is None:
        return

    def dump_snapshot(filename="dump_snapshot.pickle", *args, **kwargs):
        with open(filename, "wb") as f:
            pickle.dump(_snapshot_of(native), f)

    private = {
        "_record_memory_history": lambda *args, **kwargs: None,
        "_snapshot": lambda *args, **kwargs: _snapshot_of(native),
        "_dump_snapshot": dump_snapshot,
    }
    for name, function in private.items():
        if hasattr(memory, name):
            patches.replace("torch.cuda.memory." + name, function)
    public = getattr(memory, "__all__", ())
    for name, function in cuda.items():
        if name in public:
            patches.replace("torch.cuda.memory." + name, function)
