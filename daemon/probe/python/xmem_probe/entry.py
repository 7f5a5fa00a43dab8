"""From the probe's readings to one GPU catalog entry (etc/gpus.yaml's schema, read by
simulator/analysis/catalog.cpp), every number with a source that says "measured".

A reading is one step of sequence.py: its JSON line, plus `used`, the device's used memory
(NVML, bytes) taken after the step. Between two readings:

  outside    = (used - used before) - (reserved - reserved before): what the step added on
               the GPU beyond the caching allocator's segments (a context, kernel images,
               library handles), which the catalog budgets because a trace cannot see it;
  workspace  = peak - allocated before the operation - its output: what the operation took
               from the allocator besides its result (cuBLAS keeps its workspace; cuBLASLt
               takes its own for the call).

  context_mib            = outside(context) + outside(cublas) + outside(cublaslt): the catalog's
                           context is the CUDA context plus the kernels a training step loads
  cublas_workspace_kib   = workspace(cublas)
  cublaslt_workspace_kib = workspace(cublaslt)
  cudnn_context_mib      = outside(cudnn)

MiB and KiB are rounded up: the catalog's terms are sizes a share must hold.
"""
import json
import math

MIB = 1 << 20
KIB = 1 << 10
STEPS = ("start", "context", "cublas", "cublaslt", "cudnn")


def outside(readings, step):
    i = STEPS.index(step)
    now, before = readings[i], readings[i - 1]
    return (now["used"] - before["used"]) - (now["reserved"] - before.get("reserved", 0))


def workspace(readings, step):
    r = readings[STEPS.index(step)]
    return r["peak"] - r["allocated_before"] - r["output_bytes"]


def rounded_up(nbytes, unit):
    """Whole units, at least 1 (the catalog takes positive numbers), and whether it was less."""
    units = math.ceil(max(nbytes, 0) / unit)
    return max(units, 1), units < 1


def measure(readings):
    """{catalog key: (value, what it is, whether a zero was raised to 1)}."""
    context = sum(outside(readings, s) for s in ("context", "cublas", "cublaslt"))
    terms = {
        "context_mib": (context, MIB, "NVML used memory beyond the caching allocator's reserved "
                        "bytes after the CUDA context, a cuBLAS matmul and a cuBLASLt addmm"),
        "cublas_workspace_kib": (workspace(readings, "cublas"), KIB,
                                 "the allocator's peak in the first matmul beyond its output"),
        "cublaslt_workspace_kib": (workspace(readings, "cublaslt"), KIB,
                                   "the allocator's peak in the first addmm with a 1-D bias "
                                   "(cuBLASLt) beyond its output"),
        "cudnn_context_mib": (outside(readings, "cudnn"), MIB,
                              "NVML used memory beyond the allocator's reserved bytes after "
                              "the first conv2d (cuDNN)"),
    }
    return {key: (*rounded_up(nbytes, unit), what) for key, (nbytes, unit, what) in terms.items()}


def quoted(text):
    # A JSON string is a YAML double-quoted scalar.
    return json.dumps(text)


def render(facts, readings, date):
    """The entry as YAML text, a one-item list indented to paste under gpus.yaml's `gpus:`.
    facts: name, aliases, nvml_name, total_mib, compute_capability, driver, device."""
    start = readings[0]
    stamp = (f"measured by xmem probe-gpu, {date}, driver {facts['driver']}, CUDA "
             f"{start['cuda']}, torch {start['torch']}")
    sources = {
        "total_memory_mib": f"{stamp}: NVML memory total of {facts['nvml_name']}",
        "compute_capability": f"{stamp}: NVML CUDA compute capability of {facts['nvml_name']}",
    }
    numbers = {"total_memory_mib": facts["total_mib"]}
    context = next(r for r in readings if r["step"] == "context")
    if context.get("multiprocessors"):
        numbers["multiprocessors"] = context["multiprocessors"]
        sources["multiprocessors"] = (f"{stamp}: torch.cuda.get_device_properties()"
                                      ".multi_processor_count")
    for key, (value, raised, what) in measure(readings).items():
        numbers[key] = value
        sources[key] = f"{stamp}: {what}" + (
            "; measured 0, written as 1, the least the catalog takes" if raised else "")
    lines = [
        f"  # {facts['nvml_name']} (GPU {facts['device']}), {stamp}, cuDNN {start['cudnn']}.",
        "  # Paste under `gpus:` in gpus.yaml in place of this GPU's entry (docs/probe-gpu.md).",
        f"  - name: {quoted(facts['name'])}",
        "    aliases: [" + ", ".join(quoted(a) for a in facts["aliases"]) + "]",
        f"    total_memory_mib: {numbers['total_memory_mib']}",
        f"    compute_capability: {quoted(facts['compute_capability'])}",
    ]
    lines += [f"    {key}: {numbers[key]}" for key in
              ("context_mib", "cublas_workspace_kib", "cublaslt_workspace_kib",
               "cudnn_context_mib", "multiprocessors") if key in numbers]
    lines.append("    sources:")
    lines += [f"      {key}: {quoted(text)}" for key, text in sources.items()]
    return "\n".join(lines) + "\n"


def catalog_name(nvml_name):
    """A catalog-style name from NVML's: "NVIDIA H100 80GB HBM3" -> "H100-80GB-HBM3"."""
    words = nvml_name.split()
    while words and words[0] in ("NVIDIA", "Tesla", "GeForce", "Quadro"):
        words = words[1:]
    return "-".join(words) or nvml_name
