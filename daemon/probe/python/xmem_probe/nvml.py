"""The few NVML calls the probe makes, through ctypes, with the signatures of NVIDIA's NVML API
Reference (nvml.h). Every failure is a ProbeRefusal carrying one line for the administrator."""
import ctypes

NVML_SUCCESS = 0


class ProbeRefusal(Exception):
    """Why the probe cannot measure here, as one line (without the `xmem: probe-gpu: ` prefix)."""


class Memory(ctypes.Structure):
    # nvmlMemory_t: bytes.
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class ProcessInfo(ctypes.Structure):
    # nvmlProcessInfo_v1_t, the layout of the unversioned nvmlDeviceGetComputeRunningProcesses
    # (the one plugin/nvml.c resolves too).
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


class Nvml:
    def __init__(self, library):
        try:
            self.lib = ctypes.CDLL(library)
        except OSError as e:
            raise ProbeRefusal(f"cannot load NVML ({library}): {e}; run it on a GPU node with "
                               "the NVIDIA driver installed, or give --nvml PATH") from None
        self.library = library
        self._call("nvmlInit_v2")

    def _call(self, name, *args):
        try:
            function = getattr(self.lib, name)
        except AttributeError:
            raise ProbeRefusal(f"{self.library} has no {name}; is it NVIDIA's "
                               "libnvidia-ml.so.1?") from None
        rc = function(*args)
        if rc != NVML_SUCCESS:
            raise ProbeRefusal(f"{name} failed (NVML error {rc}); check the driver with "
                               "nvidia-smi")

    def _text(self, name, *args):
        buf = ctypes.create_string_buffer(96)
        self._call(name, *args, buf, ctypes.c_uint(len(buf)))
        return buf.value.decode(errors="replace")

    def device_count(self):
        n = ctypes.c_uint()
        self._call("nvmlDeviceGetCount_v2", ctypes.byref(n))
        return n.value

    def device(self, index):
        handle = ctypes.c_void_p()
        self._call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(handle))
        return handle

    def driver_version(self):
        return self._text("nvmlSystemGetDriverVersion")

    def name(self, device):
        return self._text("nvmlDeviceGetName", device)

    def compute_capability(self, device):
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._call("nvmlDeviceGetCudaComputeCapability", device, ctypes.byref(major),
                   ctypes.byref(minor))
        return f"{major.value}.{minor.value}"

    def memory(self, device):
        m = Memory()
        self._call("nvmlDeviceGetMemoryInfo", device, ctypes.byref(m))
        return m

    def compute_pids(self, device):
        infos = (ProcessInfo * 64)()
        count = ctypes.c_uint(len(infos))
        self._call("nvmlDeviceGetComputeRunningProcesses", device, ctypes.byref(count), infos)
        return [infos[i].pid for i in range(count.value)]
