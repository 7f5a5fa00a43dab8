"""xmem fast capture bootstrap (see docs/fast-mode.md).

xmem-profile-fast runs xmem-profile with this directory as its Python package directory,
so Python imports this module before the user's script. It puts the exact capture's package
(XMEM_EXACT_PYDIR) on the path (its pieces are reused), chains the sitecustomize the two
shadow (Debian ships one), and arms the fast capture; in a sweep with a zygote
(XMEM_ZYGOTE_SOCKET, xmem_fast/zygote.py), it hands the job to the zygote instead.
"""
import os
import sys

_exact = os.environ.get("XMEM_EXACT_PYDIR", "")
if _exact:
    sys.path.insert(1, _exact)

from xmem_capture.sitechain import chain_shadowed_sitecustomize  # noqa: E402 (needs _exact)

chain_shadowed_sitecustomize([os.path.dirname(os.path.abspath(__file__)), _exact])
if os.environ.get("XMEM_TRACE_OUT"):
    if os.environ.get("XMEM_ZYGOTE_SOCKET"):
        from xmem_fast import attach

        attach.attach(os.environ.pop("XMEM_ZYGOTE_SOCKET"))  # returns only when not attached
    from xmem_fast import arm

    arm.arm()
