"""The target GPU's facts a capture needs but has no device to ask.

xmem-estimate sets XMEM_GPU_CAPABILITY ("8.0") from the GPU catalog (etc/gpus.yaml); a
capture run by hand without it sizes for an A100 (sm80), the catalog's default GPU class.
"""
import os

DEFAULT_CAPABILITY = (8, 0)


def capability(environ=os.environ):
    """(major, minor) from XMEM_GPU_CAPABILITY; ValueError with one `xmem:` line if bad."""
    text = environ.get("XMEM_GPU_CAPABILITY", "").strip()
    if not text:
        return DEFAULT_CAPABILITY
    major, dot, minor = text.partition(".")
    if not (major.isdigit() and minor.isdigit() and dot):
        raise ValueError(f"xmem: XMEM_GPU_CAPABILITY: invalid value: {text} "
                         "(want MAJOR.MINOR, e.g. 8.0)")
    return int(major), int(minor)
