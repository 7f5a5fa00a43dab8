"""A fake CUDA torch for `xmem probe-gpu`'s test (README.md beside it gives the amounts)."""
import math
import os
import types

__version__ = "2.4.0+fake"
version = types.SimpleNamespace(cuda="12.4")
float32 = "float32"
_ELEMENT = {"float32": 4}
MIB = 1 << 20
KIB = 1 << 10

# What a real GPU would show beyond the allocator, and the libraries' workspaces.
CONTEXT_MIB = 412
CUBLAS_MIB, CUBLAS_WORKSPACE = 64, 8320 * KIB
CUBLASLT_MIB, CUBLASLT_WORKSPACE = 8, 1024 * KIB
CUDNN_MIB, CUDNN_WORKSPACE = 226, 3 * MIB
MULTIPROCESSORS = 108


def _gpu_add(mib):
    path = os.environ["XMEM_FAKE_NVML_USED_FILE"]
    with open(path) as f:
        used = int(f.read().strip() or 0)
    with open(path, "w") as f:
        f.write(f"{used + mib}\n")


class _Allocator:
    def __init__(self):
        self.allocated = self.reserved = self.peak = 0
        self.loaded = set()

    def first(self, what, mib):
        """What a library or the context loads outside the allocator, once per process."""
        if what not in self.loaded:
            self.loaded.add(what)
            _gpu_add(mib)

    def malloc(self, nbytes):
        self.first("context", CONTEXT_MIB)
        self.allocated += math.ceil(nbytes / 512) * 512
        self.peak = max(self.peak, self.allocated)
        while self.allocated > self.reserved:
            segment = 2 * MIB if self.reserved == 0 else 20 * MIB
            self.reserved += segment
            _gpu_add(segment // MIB)

    def free(self, nbytes):
        self.allocated -= math.ceil(nbytes / 512) * 512


_alloc = _Allocator()


class device:  # noqa: N801 (torch's name)
    def __init__(self, kind):
        self.type = kind


class Tensor:
    def __init__(self, shape, dtype=float32):
        self.shape = tuple(shape)
        self.dtype = dtype
        _alloc.malloc(self.element_size() * self.numel())

    def element_size(self):
        return _ELEMENT[self.dtype]

    def numel(self):
        return math.prod(self.shape)


def _cuda_tensor(shape, device_, dtype):
    assert getattr(device_, "type", device_) == "cuda", "the probe works on the GPU"
    return Tensor(shape, dtype)


def zeros(*shape, device=None, dtype=float32):
    return _cuda_tensor(shape, device, dtype)


def randn(*shape, device=None, dtype=float32):
    return _cuda_tensor(shape, device, dtype)


def _with_workspace(nbytes, keep):
    _alloc.malloc(nbytes)
    if not keep:
        _alloc.free(nbytes)


def matmul(a, b):
    if "cublas" not in _alloc.loaded:
        _alloc.first("cublas", CUBLAS_MIB)
        _with_workspace(CUBLAS_WORKSPACE, keep=True)
    return Tensor((a.shape[0], b.shape[1]), a.dtype)


def addmm(bias, a, b):
    assert len(bias.shape) == 1, "only a 1-D bias routes to cuBLASLt"
    _alloc.first("cublaslt", CUBLASLT_MIB)
    out = Tensor((a.shape[0], b.shape[1]), a.dtype)
    if os.environ.get("XMEM_FAKE_TORCH_LT_SHARED") != "1":
        _with_workspace(CUBLASLT_WORKSPACE, keep=False)
    return out


def _conv2d(x, w):
    _alloc.first("cudnn", CUDNN_MIB)
    _with_workspace(CUDNN_WORKSPACE, keep=False)
    return Tensor((x.shape[0], w.shape[0], x.shape[2] - 2, x.shape[3] - 2), x.dtype)


def _cuda_call():
    _alloc.first("context", CONTEXT_MIB)


def _properties(device):
    # An A100's count; the probe asks only after the context exists.
    assert "context" in _alloc.loaded, "get_device_properties before the context"
    return types.SimpleNamespace(multi_processor_count=MULTIPROCESSORS)


def _reset_peak():
    _alloc.peak = _alloc.allocated


cuda = types.SimpleNamespace(
    is_available=lambda: os.environ.get("XMEM_FAKE_TORCH_CUDA", "1") == "1",
    synchronize=_cuda_call,
    memory_allocated=lambda: _alloc.allocated,
    memory_reserved=lambda: _alloc.reserved,
    max_memory_allocated=lambda: _alloc.peak,
    reset_peak_memory_stats=_reset_peak,
    current_device=lambda: 0,
    get_device_properties=_properties,
)
backends = types.SimpleNamespace(
    cudnn=types.SimpleNamespace(is_available=lambda: True, version=lambda: 90100))
nn = types.SimpleNamespace(functional=types.SimpleNamespace(conv2d=_conv2d))
