"""The scripted torch sequence `xmem probe-gpu` measures, run as a script by the site's own
Python (--python), on the one GPU the probe made visible (CUDA_VISIBLE_DEVICES).

After each step it synchronizes, prints one line `xmem-probe {JSON}` on stdout with the
caching allocator's figures, and waits for a line on stdin: the probe reads the device's used
memory from NVML in between. The steps, each the first of its kind in the process:

  start     torch imported, no CUDA call yet (the baseline)
  context   a 1-element tensor: the CUDA context and the allocator's first segment; its
            line also gives the GPU's multiprocessor count, asked once the context exists
  cublas    a float32 matmul: PyTorch's cuBLAS handle, its workspace, cuBLAS's kernels
  cublaslt  addmm with a 1-D bias: PyTorch 2.x routes it to cuBLASLt (gemm_and_bias)
  cudnn     a float32 conv2d: cuDNN's handle and kernels

Each step reports what the allocator held before its operation (inputs made), after it, and
its peak during it, and the bytes of the operation's output, so that the probe can tell a
workspace (in the allocator) from what a library loads outside it (entry.py). It exits 3 with
one line on stderr when this Python has no torch, or a torch without CUDA.
"""
import json
import sys

REFUSED = 3


def refuse(why):
    print(f"xmem: probe-gpu: {why}", file=sys.stderr)
    sys.exit(REFUSED)


def report(torch, step, before, output):
    torch.cuda.synchronize()
    line = {"step": step, "allocated_before": before,
            "allocated": torch.cuda.memory_allocated(),
            "reserved": torch.cuda.memory_reserved(),
            "peak": torch.cuda.max_memory_allocated(),
            "output_bytes": output.element_size() * output.numel()}
    if step == "context":
        properties = torch.cuda.get_device_properties(torch.cuda.current_device())
        line["multiprocessors"] = properties.multi_processor_count
    return line


def handshake(line):
    print("xmem-probe " + json.dumps(line), flush=True)
    if not sys.stdin.readline():
        sys.exit(1)  # the probe is gone


def measured_op(torch, step, inputs, op):
    """Makes the inputs, then runs op on them with the peak counter reset: one step."""
    made = inputs()
    torch.cuda.synchronize()  # the first call creates the context: inside the step measured
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = op(*made)
    handshake(report(torch, step, before, out))
    return made, out


def main():
    try:
        import torch
    except ImportError as e:
        refuse(f"{sys.executable} cannot import torch ({e}); give --python the site's Python")
    if not torch.cuda.is_available():
        built = f"built for CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU build"
        refuse(f"torch {torch.__version__} in {sys.executable} sees no CUDA GPU ({built}); give "
               "--python the site's CUDA build of torch")
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    handshake({"step": "start", "torch": torch.__version__, "cuda": torch.version.cuda,
               "cudnn": cudnn})
    cuda = torch.device("cuda")
    f32 = torch.float32
    kept = [measured_op(torch, "context", lambda: (), lambda: torch.zeros(1, device=cuda))]
    kept.append(measured_op(
        torch, "cublas",
        lambda: (torch.randn(512, 512, device=cuda, dtype=f32),
                 torch.randn(512, 512, device=cuda, dtype=f32)),
        torch.matmul))
    kept.append(measured_op(
        torch, "cublaslt",
        lambda: (torch.randn(512, device=cuda, dtype=f32),
                 torch.randn(256, 512, device=cuda, dtype=f32),
                 torch.randn(512, 512, device=cuda, dtype=f32)),
        torch.addmm))
    kept.append(measured_op(
        torch, "cudnn",
        lambda: (torch.randn(8, 3, 64, 64, device=cuda, dtype=f32),
                 torch.randn(16, 3, 3, 3, device=cuda, dtype=f32)),
        torch.nn.functional.conv2d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
