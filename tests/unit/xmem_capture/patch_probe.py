"""Run as the job's script under a capture (test_patches.py): writes to argv[1], as JSON, the
targets the capture replaced through xmem_patches, and every attribute of torch, sys and
threading that holds xmem's code without being named in xmem_patches.PATCHES. Then it takes
one optimizer step, which ends the capture as a job does."""
import inspect
import json
import os
import sys
import types
import warnings

import torch
import xmem_patches

XMEM_DIRS = tuple(sorted({os.path.dirname(m.__file__) + os.sep for name, m in list(sys.modules.items())
                          if name.split(".")[0].startswith("xmem") and getattr(m, "__file__", None)}))


def _code_is_xmem(value):
    if isinstance(value, (types.MethodType, staticmethod, classmethod)):
        value = value.__func__
    return isinstance(value, types.FunctionType) and value.__code__.co_filename.startswith(XMEM_DIRS)


def is_xmem(value):
    """A function or class the captures define (wrappers keep torch's __module__, so code
    files decide; a contextmanager is judged by the generator it wraps)."""
    if isinstance(value, type):
        return (value.__module__ or "").split(".")[0].startswith("xmem")
    if _code_is_xmem(value):
        return True
    if isinstance(value, types.FunctionType) and hasattr(value, "__wrapped__"):
        return _code_is_xmem(inspect.unwrap(value))
    return False


def watched_modules():
    for name, module in list(sys.modules.items()):
        if module is not None and (name in ("torch", "sys", "threading") or name.startswith("torch.")):
            yield name, module


def found():
    """{(id(owner), attribute): name} of every watched attribute that holds xmem's code."""
    out, classes = {}, {}
    for name, module in watched_modules():
        for attr, value in list(vars(module).items()):
            if is_xmem(value):
                out[(id(module), attr)] = f"{name}.{attr}"
            elif isinstance(value, type):
                classes[id(value)] = (f"{name}.{attr}", value)
    for name, cls in classes.values():
        for attr, value in list(vars(cls).items()):
            if is_xmem(value):
                out[(id(cls), attr)] = f"{name}.{attr}"
    return out


def declared():
    """The (id(owner), attribute) pairs PATCHES names, and the owners of its "a.b.*" entries."""
    pairs, families = set(), set()
    for patch in xmem_patches.PATCHES:
        path, attr = patch.target.rsplit(".", 1)
        try:
            owner = xmem_patches._owner(path)
        except (AttributeError, ImportError):
            continue  # not in this torch, or a library this environment lacks (DeepSpeed)
        if attr == "*":
            families.add(id(owner))
        else:
            pairs.add((id(owner), attr))
    return pairs, families


warnings.simplefilter("ignore")  # deprecated torch names met on the walk
pairs, families = declared()
undeclared = sorted(name for key, name in found().items()
                    if key not in pairs and key[0] not in families)
with open(sys.argv[1], "w") as f:
    json.dump({"replaced": sorted(set(xmem_patches.replaced)), "undeclared": undeclared}, f)
w = torch.nn.Parameter(torch.zeros(2))
torch.optim.SGD([w], lr=0.1).step()
