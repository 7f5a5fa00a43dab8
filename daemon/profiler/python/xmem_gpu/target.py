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


# maxThreadsPerMultiProcessor by compute capability (NVIDIA CUDA C++ Programming Guide,
# "Technical Specifications per Compute Capability"); a major release not listed takes 2048.
_THREADS_PER_MULTIPROCESSOR = {(7, 5): 1024, (8, 6): 1536, (8, 9): 1536, (12, 0): 1536}


def multiprocessors(environ=os.environ):
    """The target GPU's multiprocessor count from XMEM_GPU_MULTIPROCESSORS (the catalog's
    `multiprocessors`), or None when unknown: rules that need it then add nothing."""
    text = environ.get("XMEM_GPU_MULTIPROCESSORS", "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) == 0:
        raise ValueError(f"xmem: XMEM_GPU_MULTIPROCESSORS: invalid value: {text} "
                         "(want a positive whole number, e.g. 108)")
    return int(text)


def threads_per_multiprocessor(cc):
    """Resident threads per multiprocessor of a GPU of compute capability CC (major, minor)."""
    return _THREADS_PER_MULTIPROCESSOR.get(tuple(cc), 2048)
