"""ctypes binding of libxmem-capture (daemon/profiler/capture/capture_api.h)."""
import ctypes


class CaptureError(RuntimeError):
    pass


class Native:
    """Typed wrappers around the C API; one instance per process."""

    def __init__(self, path):
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            raise CaptureError(f"xmem: cannot load the capture library {path}: {e} "
                               "(a cached one: delete it and it is rebuilt; else rebuild xmem "
                               "or check XMEM_CAPTURE_LIB)") from None
        u32, u64, c_int = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int
        sig = {
            "xmem_capture_start": (c_int, [ctypes.c_char_p]),
            "xmem_capture_error": (ctypes.c_char_p, []),
            "xmem_capture_meta": (None, [ctypes.c_char_p, ctypes.c_char_p]),
            "xmem_capture_intern": (u32, [ctypes.c_char_p]),
            "xmem_capture_set_module": (None, [u32]),
            "xmem_capture_iteration": (None, [u64]),
            "xmem_capture_kernel": (None, [ctypes.c_char_p]),
            "xmem_capture_phase": (None, [ctypes.c_char_p]),
            "xmem_capture_set_dev": (c_int, [c_int]),
            "xmem_capture_dev_of": (c_int, [ctypes.c_size_t]),
            "xmem_capture_empty_cache": (None, []),
            "xmem_capture_memory_fraction": (None, [ctypes.c_double]),
            "xmem_capture_allocs": (u64, []),
            "xmem_capture_frees": (u64, []),
            "xmem_capture_live_bytes": (u64, []),
            "xmem_capture_device_bytes": (u64, []),
            "xmem_capture_device_peak_bytes": (u64, []),
            "xmem_capture_reset_device_peak": (None, []),
            "xmem_capture_finish": (c_int, []),
            "xmem_capture_abandon": (None, []),
        }
        for name, (res, args) in sig.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        self._lib = lib
        # Hot paths bind the raw functions directly (a Python call less per event).
        self.set_dev = lib.xmem_capture_set_dev
        self.dev_of = lib.xmem_capture_dev_of
        self.set_module = lib.xmem_capture_set_module
        self.intern_raw = lib.xmem_capture_intern

    def _check(self, rc):
        if rc != 0:
            raise CaptureError(self._lib.xmem_capture_error().decode(errors="replace"))

    def start(self, path):
        self._check(self._lib.xmem_capture_start(path.encode()))

    def finish(self):
        self._check(self._lib.xmem_capture_finish())

    def abandon(self):
        self._lib.xmem_capture_abandon()

    def meta(self, key, value):
        self._lib.xmem_capture_meta(key.encode(), str(value).encode(errors="replace"))

    def intern(self, name):
        return self.intern_raw(name.encode(errors="replace"))

    def iteration(self, n):
        self._lib.xmem_capture_iteration(n)

    def kernel(self, text):
        self._lib.xmem_capture_kernel(text.encode(errors="replace"))

    def phase(self, name):
        self._lib.xmem_capture_phase(name.encode())

    def empty_cache(self):
        self._lib.xmem_capture_empty_cache()

    def memory_fraction(self, fraction):
        self._lib.xmem_capture_memory_fraction(float(fraction))

    def device_bytes(self):
        return self._lib.xmem_capture_device_bytes()

    def device_peak_bytes(self):
        return self._lib.xmem_capture_device_peak_bytes()

    def reset_device_peak(self):
        self._lib.xmem_capture_reset_device_peak()

    def totals(self):
        lib = self._lib
        return lib.xmem_capture_allocs(), lib.xmem_capture_frees(), lib.xmem_capture_live_bytes()
