"""Runs the sitecustomize a capture's own sitecustomize shadows (Debian ships one).

Both captures' sitecustomize modules call this first: the exact one (this package's parent
directory) and the fast one (xmem_fast's, with this package's directory on the path too).
"""
import os
import sys


def chain_shadowed_sitecustomize(skip_dirs):
    """Executes the first sitecustomize.py on sys.path outside SKIP_DIRS (the capture
    packages' directories), as Python would have imported it without them."""
    skip = {os.path.abspath(d) for d in skip_dirs if d}
    for entry in sys.path:
        if not entry or os.path.abspath(entry) in skip:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            with open(candidate, "rb") as f:
                code = compile(f.read(), candidate, "exec")
            exec(code, {"__name__": "sitecustomize", "__file__": candidate})
            return
