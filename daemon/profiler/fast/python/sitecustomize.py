"""xmem fast capture bootstrap (see docs/fast-mode.md).

xmem-profile-fast runs xmem-profile with this directory as its Python package directory,
so Python imports this module before the user's script. It chains the sitecustomize it
shadows (Debian ships one), puts the exact capture's package (XMEM_EXACT_PYDIR) on the path
(its pieces are reused), and arms the fast capture.
"""
import os
import sys


def _chain_shadowed_sitecustomize():
    skip = {os.path.dirname(os.path.abspath(__file__)), os.environ.get("XMEM_EXACT_PYDIR", "")}
    for entry in sys.path:
        if not entry or os.path.abspath(entry) in skip:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            with open(candidate, "rb") as f:
                code = compile(f.read(), candidate, "exec")
            exec(code, {"__name__": "sitecustomize", "__file__": candidate})
            return


_chain_shadowed_sitecustomize()
if os.environ.get("XMEM_EXACT_PYDIR"):
    sys.path.insert(1, os.environ["XMEM_EXACT_PYDIR"])
if os.environ.get("XMEM_TRACE_OUT"):
    from xmem_fast import arm

    arm.arm()
