"""Where in the user's script something happened: the innermost frame outside torch and
outside xmem's own Python (the captures' package directories), as ' at FILE:LINE'; and
whether torch itself, not the script, made a call that reached the capture."""
import os
import traceback

_EXACT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _xmem_dirs(own_dirs):
    return tuple(d for d in (_EXACT_DIR, *own_dirs) if d)


def where(torch, *own_dirs, frames=None):
    """' at FILE:LINE' of the innermost frame outside torch, this package's directory and
    OWN_DIRS (fast mode's), or '' when every frame is theirs. FRAMES: a traceback's
    (traceback.extract_tb) instead of the current stack."""
    skip = (os.path.dirname(torch.__file__),) + _xmem_dirs(own_dirs)
    for frame in reversed(frames if frames is not None else traceback.extract_stack()):
        if not frame.filename.startswith(skip) and not frame.filename.startswith("<"):
            return f" at {frame.filename}:{frame.lineno}"
    return ""


def torch_called(torch, *own_dirs, passing=()):
    """Whether the innermost frame outside xmem's Python (and torch's files named in PASSING,
    which the script's calls pass through) is torch's: torch itself made the call (the
    recomputation of torch.utils.checkpoint, say), not the script."""
    torch_dir = os.path.dirname(torch.__file__)
    skip = _xmem_dirs(own_dirs)
    for frame in reversed(traceback.extract_stack()):
        name = frame.filename
        if name.startswith(skip) or (name.startswith(torch_dir) and
                                     os.path.basename(name) in passing):
            continue
        return name.startswith(torch_dir)
    return False
