"""xmem capture bootstrap.

xmem-profile puts this directory first on PYTHONPATH, so Python imports this module before
the user's script runs. It chains the sitecustomize it shadows (Debian ships one), then, when
the launcher asked for a capture, arms the tracer before the first line of the script.
"""
import os

from xmem_capture.sitechain import chain_shadowed_sitecustomize

chain_shadowed_sitecustomize([os.path.dirname(os.path.abspath(__file__))])

if os.environ.get("XMEM_TRACE_OUT") or os.environ.get("XMEM_SHIM"):
    from xmem_capture import bootstrap

    bootstrap.arm()
