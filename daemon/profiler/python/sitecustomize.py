"""xmem capture bootstrap.

xmem-profile puts this directory first on PYTHONPATH, so Python imports this module before
the user's script runs. It chains the sitecustomize it shadows (Debian ships one), then, when
the launcher asked for a capture, arms the tracer before the first line of the script.
"""
import os
import sys


def _chain_shadowed_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            with open(candidate, "rb") as f:
                code = compile(f.read(), candidate, "exec")
            exec(code, {"__name__": "sitecustomize", "__file__": candidate})
            return


_chain_shadowed_sitecustomize()

if os.environ.get("XMEM_TRACE_OUT") or os.environ.get("XMEM_SHIM"):
    from xmem_capture import bootstrap

    bootstrap.arm()
