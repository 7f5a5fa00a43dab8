"""What the captures replace in the user's process: one list, and the one way to replace.

A capture runs inside the job's own Python, so every attribute of torch (or of Python) it
swaps for its own changes what the job's code meets. PATCHES names each one: the attribute,
the captures that replace it ("exact": xmem-profile, "fast": xmem-profile-fast), the module
that installs it, and why. Installers replace through `replace(TARGET, VALUE)` only, which
refuses a target the list does not name; `replaced` records what this process replaced.
A target "a.b.*" stands for the attributes of a.b an installer's own table names (the CUDA
stand-in's functions). The check (tests/unit/xmem_capture/check_patches.py, run by
integration test 85-capture-torch2-patches.sh) arms each capture, looks for every attribute
of torch, sys and threading that holds xmem's code, and fails on one the list does not
name, or on an entry no installer replaced.

Not replacements, so not listed: torch function and dispatch modes the captures enter, the
module hooks, the CUDA autocast kernels and the `_index_put_impl_`, `sum` and `mean` kernels
they register through torch's own APIs (docs/capture.md, "What a capture changes in the job's process").
"""
import os
import sys
from collections import namedtuple

Patch = namedtuple("Patch", "target captures installer why when")

BOTH = ("exact", "fast")
FAST = ("fast",)


def _always(torch, capture):
    return True


def _has(path):
    """An entry whose owner is there only in some torch releases."""
    def when(torch, capture):
        owner = torch
        for part in path.split(".")[1:]:
            owner = getattr(owner, part, None)
            if owner is None:
                return False
        return True
    return when


def _loaded(module):
    """An entry for a library the job imports itself (not torch): replaced only there."""
    return lambda torch, capture: module in sys.modules


def _torch2(torch, capture):
    return int(torch.__version__.split(".")[0]) >= 2


def _exact_amp(torch, capture):
    """The exact capture maps CUDA autocast to CPU autocast on every torch; fast mode
    refuses CUDA autocast on torch 1.13 (its own autocast classes) and keeps torch's on 2.x."""
    return capture == "exact" or not _torch2(torch, capture)


def _what_if(change):
    """An entry installed only when `xmem estimate --what-if CHANGE` profiles the job again."""
    return lambda torch, capture: os.environ.get("XMEM_WHAT_IF", "") == change


def _ranks(torch, capture):
    """Installed when `xmem estimate` profiles one rank of N (--world-size, or a launcher)."""
    value = os.environ.get("XMEM_WORLD_SIZE", "")
    return value.isdigit() and int(value) >= 1


def _and(*whens):
    return lambda torch, capture: all(w(torch, capture) for w in whens)


def _entry(target, captures, installer, why, when=_always):
    return Patch(target, captures, installer, why, when)


PATCHES = (
    # The CUDA stand-in: the job sees the target GPU on a machine that has none.
    _entry("torch.cuda.*", BOTH, "xmem_capture.cuda_shim",
           "torch.cuda answers as the target GPU; memory queries read the capture's counters"),
    _entry("torch.cuda.memory.*", BOTH, "xmem_capture.memory_record",
           "a script's own memory records (_record_memory_history, _dump_snapshot, ...) "
           "answer from the capture's counts; the submodule's queries as torch.cuda's",
           _has("torch.cuda.memory")),
    _entry("torch.cuda.nvtx.*", BOTH, "xmem_capture.cuda_shim, xmem_capture.phases",
           "NVTX ranges are no-ops; nvtx.mark(\"xmem.step\") ends a step", _has("torch.cuda.nvtx")),
    _entry("torch.Tensor.record_stream", BOTH, "xmem_capture.cuda_shim",
           "argument parsing would reject the stand-in's streams"),
    _entry("torch.Generator", BOTH, "xmem_capture.cuda_shim",
           "Generator(device='cuda') draws on the CPU and reports the device asked for"),
    _entry("torch._use_cudnn_rnn_flatten_weight", BOTH, "xmem_capture.cuda_shim",
           "the CUDA-only weight flattening is skipped; unflattened weights take the same bytes",
           _has("torch._use_cudnn_rnn_flatten_weight")),
    _entry("torch.nn.DataParallel", BOTH, "xmem_capture.cuda_shim",
           "DataParallel on one virtual device: scatter copies host inputs to cuda:0"),
    _entry("torch.nn.parallel.DataParallel", BOTH, "xmem_capture.cuda_shim",
           "the same class by its module's name"),
    _entry("torch.accelerator.*", BOTH, "xmem_capture.accelerator",
           "torch.accelerator answers as torch.cuda's stand-in does", _has("torch.accelerator")),
    _entry("torch.accelerator.memory.*", BOTH, "xmem_capture.accelerator",
           "the same functions by their submodule's name", _has("torch.accelerator.memory")),
    _entry("torch.accelerator.random.*", BOTH, "xmem_capture.accelerator",
           "the CPU generator is the one a capture draws from", _has("torch.accelerator.random")),
    _entry("torch.compile", BOTH, "xmem_capture.eager",
           "compiling needs a GPU: the model runs eagerly and the trace says so",
           _has("torch.compile")),
    _entry("torch.nn.Module.compile", BOTH, "xmem_capture.eager",
           "Module.compile() likewise leaves the model eager", _has("torch.nn.Module.compile")),
    # AMP: CUDA autocast on a CPU capture (fast mode: torch 1.13 only, then refused).
    _entry("torch.autocast", BOTH, "xmem_capture.amp, xmem_fast.arm",
           "autocast('cuda') runs as CPU autocast in bfloat16 with CUDA's fp32 list; fast "
           "mode on 1.13 refuses it (its casts are not modelled on meta tensors)", _exact_amp),
    _entry("torch.amp.autocast", BOTH, "xmem_capture.amp, xmem_fast.arm",
           "the same class by its module's name", _exact_amp),
    _entry("torch.amp.autocast_mode.autocast", BOTH, "xmem_capture.amp",
           "the same class where torch's own modules look it up", _exact_amp),
    _entry("torch.cuda.amp.autocast", BOTH, "xmem_capture.amp, xmem_fast.arm",
           "torch.cuda.amp.autocast() is autocast('cuda')", _exact_amp),
    _entry("torch.cuda.amp.autocast_mode.autocast", BOTH, "xmem_capture.amp",
           "the same class by its module's name",
           _and(_exact_amp, _has("torch.cuda.amp.autocast_mode"))),
    _entry("torch.is_autocast_enabled", BOTH, "xmem_capture.amp",
           "asked for CUDA, answers what the script's CUDA autocast asked",
           _and(_exact_amp, _has("torch.get_autocast_dtype"))),
    _entry("torch.get_autocast_dtype", BOTH, "xmem_capture.amp",
           "likewise (torch.utils.checkpoint's recompute reads it)",
           _and(_exact_amp, _has("torch.get_autocast_dtype"))),
    _entry("torch.get_autocast_gpu_dtype", BOTH, "xmem_capture.amp",
           "the older name of the same query", _and(_exact_amp, _has("torch.get_autocast_dtype"))),
    _entry("torch.cuda.amp.GradScaler", BOTH, "xmem_capture.amp",
           "a torch without torch.amp.GradScaler has no CPU one: unscale in place",
           _and(_exact_amp, lambda torch, capture: not hasattr(torch.amp, "GradScaler"))),
    _entry("torch.cuda.amp.grad_scaler.GradScaler", BOTH, "xmem_capture.amp",
           "the same class by its module's name",
           _and(_exact_amp, lambda torch, capture: not hasattr(torch.amp, "GradScaler"),
                _has("torch.cuda.amp.grad_scaler"))),
    _entry("torch.amp.autocast_mode.autocast.__init__", FAST, "xmem_fast.arm",
           "torch 2.x: torch's autocast runs as it is; CUDA autocast's dtype is noted", _torch2),
    _entry("torch.clear_autocast_cache", FAST, "xmem_fast.autocast",
           "the outermost autocast's exit also clears fast mode's cast cache", _torch2),
    # The steps: what counts one, and what each phase is.
    _entry("torch.autograd.backward", BOTH, "xmem_capture.phases",
           "a backward starts the backward phase (and a step, without an optimizer)"),
    _entry("torch.autograd.grad", BOTH, "xmem_capture.phases", "likewise"),
    _entry("torch.optim.Optimizer.zero_grad", BOTH, "xmem_capture.phases",
           "the zero_grad phase, and whether it sets gradients to None"),
    _entry("torch.nn.Module.zero_grad", BOTH, "xmem_capture.phases", "likewise"),
    _entry("torch.optim.Optimizer.__init__", BOTH, "xmem_capture.phases, xmem_capture.what_if",
           "each optimizer's step() ends a step; under --what-if optimizer=fused, an optimizer "
           "with no fused variant is refused"),
    _entry("torch.utils.data.dataloader._BaseDataLoaderIter.__next__", BOTH,
           "xmem_capture.phases", "fetching a batch is the data phase, on the host"),
    _entry("sys.excepthook", BOTH, "xmem_capture.bootstrap",
           "a job that failed leaves no trace; a limit its caller set becomes a status line"),
    _entry("threading.Thread._bootstrap_inner", BOTH,
           "xmem_capture.devices (exact), xmem_fast.arm (fast)",
           "new threads (the DataLoader's pin thread) get the device boundary"),
    _entry("torch.UntypedStorage.resize_", BOTH,
           "xmem_capture.devices (exact), xmem_fast.arm (fast)",
           "a device storage's own resize_ (FSDP2's resharding) runs no op: its new block is a "
           "device block, and a resize to 0 frees it, as on a GPU"),
    # Checkpoints and the GPU rules.
    _entry("torch.load", BOTH, "xmem_capture.bootstrap",
           "loads to the host, then moves to the device where a GPU run would"),
    _entry("torch.save", FAST, "xmem_fast.arm",
           "fast mode has no values to save: saving device tensors falls back"),
    _entry("torch.nn.functional.dropout", BOTH, "xmem_gpu.dropout",
           "the GPU's native_dropout also where no mode is active (checkpointing's recompute)"),
    _entry("torch.nn.functional.scaled_dot_product_attention", FAST, "xmem_fast.device_mode",
           "torch's own Python callers meet the SDPA chooser and CUDA autocast's casts",
           _and(_torch2, _has("torch.nn.functional.scaled_dot_product_attention"))),
    _entry("torch.nn.functional.linear", FAST, "xmem_fast.device_mode",
           "CUDA autocast's casts where torch's Python calls it with no mode active",
           _and(_torch2, _has("torch.nn.functional.scaled_dot_product_attention"))),
    _entry("torch.nn.functional.softmax", FAST, "xmem_fast.device_mode", "likewise",
           _and(_torch2, _has("torch.nn.functional.scaled_dot_product_attention"))),
    # The --what-if changes a capture applies inside the job (xmem_capture.what_if).
    _entry("torch.optim.Adam.__init__", BOTH, "xmem_capture.what_if",
           "optimizer=fused: built with fused=True, foreach dropped", _what_if("optimizer=fused")),
    _entry("torch.optim.AdamW.__init__", BOTH, "xmem_capture.what_if", "likewise",
           _what_if("optimizer=fused")),
    _entry("torch.optim.SGD.__init__", BOTH, "xmem_capture.what_if", "likewise",
           _what_if("optimizer=fused")),
    # Fast mode's fake tensors.
    _entry("torch.autograd.profiler.record_function.__enter__", FAST, "xmem_fast.arm",
           "record_function ranges name the outer call, as RecordFunction does in the exact trace"),
    _entry("torch.autograd.profiler.record_function.__exit__", FAST, "xmem_fast.arm", "likewise"),
    _entry("torch.nn.Parameter.__new__", FAST, "xmem_fast.arm",
           "parameters made on the host are host-meta: a 7B model costs no host RAM"),
    _entry("torch.nn.Module.register_buffer", FAST, "xmem_fast.arm", "buffers likewise"),
    _entry("torch._nested_tensor_from_mask_left_aligned", FAST, "xmem_fast.arm",
           "nn.TransformerEncoder's data-dependent padding check answers 'not aligned' on "
           "device tensors: the non-fast path a capture takes anyway",
           _has("torch._nested_tensor_from_mask_left_aligned")),
    # Ranks (--world-size N): the job's process groups are xmem's (backend "xmem", ranks.py).
    _entry("torch.distributed.init_process_group", FAST, "xmem_fast.ranks",
           "the job's process group is xmem's, at its rank and world size: "
           "collectives return at once, nothing waits for a peer", _ranks),
    _entry("torch.distributed.distributed_c10d.init_process_group", FAST, "xmem_fast.ranks",
           "the same function by its module's name", _ranks),
    _entry("torch.distributed.new_group", FAST, "xmem_fast.ranks",
           "a subgroup (a device mesh's) uses the fake backend too", _ranks),
    _entry("torch.distributed.distributed_c10d.new_group", FAST, "xmem_fast.ranks",
           "the same function by its module's name", _ranks),
    _entry("torch.autograd.graph._engine_run_backward", FAST, "xmem_fast.ranks",
           "a backward runs at the device boundary, as the forward does: FSDP2's backward "
           "hooks ask their buffers' device", _ranks),
    _entry("torch.autograd._engine_run_backward", FAST, "xmem_fast.ranks",
           "the same function by the name torch.autograd.backward calls", _ranks),
    _entry("torch._C._get_accelerator", FAST, "xmem_fast.ranks",
           "FSDP2's default device mesh is on CUDA, as on a GPU rank", _ranks),
    _entry("torch.distributed._verify_params_across_processes", FAST, "xmem_fast.ranks",
           "DDP's check that the ranks' parameter shapes agree reads values back; every rank "
           "runs the one script", _ranks),
    _entry("torch.distributed.fsdp._init_utils._need_to_materialize_module", FAST,
           "xmem_fast.ranks", "FSDP1 would materialise a module whose parameters are fast "
           "mode's device tensors (meta tensors), which a GPU rank holds already",
           _and(_ranks, _has("torch.distributed.fsdp._init_utils._need_to_materialize_module"))),
    _entry("torch.distributed.fsdp._flat_param._data_ptr_allocated", FAST,
           "xmem_fast.fsdp_states", "FSDP1 (SHARD_GRAD_OP) asks whether a flat parameter is "
           "allocated by its data pointer, which no meta storage has; a GPU's has one",
           _and(_ranks, _has("torch.distributed.fsdp._flat_param._data_ptr_allocated"))),
    _entry("torch.distributed.fsdp._init_utils._materialize_meta_module", FAST,
           "xmem_fast.fsdp_states", "FSDP1 takes a module built on the host (fast mode's "
           "host-meta tensors) for deferred init: refused in one line",
           _and(_ranks, _has("torch.distributed.fsdp._init_utils._materialize_meta_module"))),
    _entry("torch.distributed.fsdp._flat_param.FlatParamHandle.flat_param_to", FAST,
           "xmem_fast.fsdp_states", "FSDP1's CPUOffload moves a device flat parameter's data "
           "to the host, which a meta tensor cannot take: refused in one line",
           _and(_ranks, _has("torch.distributed.fsdp._flat_param.FlatParamHandle"))),
    _entry("torch.distributed.fsdp._fully_shard._fsdp_init._move_states_to_device", FAST,
           "xmem_fast.fsdp_states", "fully_shard leaves meta parameters on meta; a model built "
           "on the host (fast mode's host-meta tensors) is moved to the GPU, as torch moves it",
           _and(_ranks, _has("torch.distributed.fsdp._fully_shard._fsdp_init"))),
    _entry("torch.distributed.fsdp._fully_shard._fsdp_param.FSDPParam._init_sharded_param",
           FAST, "xmem_fast.fsdp_states", "CPU offloading keeps a meta parameter's shard on "
           "meta; a GPU rank's parameter (fast mode's device tensor) has its shard on the host",
           _and(_ranks, _has("torch.distributed.fsdp._fully_shard._fsdp_param"))),
    # DeepSpeed, where the job imported it before making its process group (ranks.py).
    _entry("deepspeed.runtime.zero.utils.assert_lst_len_same_as_other_ranks", FAST,
           "xmem_fast.ranks", "ZeRO-3's check that every rank's list has rank 0's length "
           "reads a broadcast back; every rank runs the one script", _and(_ranks, _loaded("deepspeed"))),
    _entry("deepspeed.runtime.zero.utils.get_lst_from_rank0", FAST, "xmem_fast.ranks",
           "rank 0's list, broadcast for the same check, is this rank's",
           _and(_ranks, _loaded("deepspeed"))),
)

_DECLARED = {p.target: p for p in PATCHES}

replaced = []  # the targets this process replaced, in order (read by the check)


def declared(target):
    """The entry that names TARGET ("a.b.c", or "a.b.*" for a table's attribute), or None."""
    entry = _DECLARED.get(target)
    if entry is None:
        entry = _DECLARED.get(target.rsplit(".", 1)[0] + ".*")
    return entry


def _owner(path):
    parts = path.split(".")
    owner = sys.modules.get(parts[0]) or __import__(parts[0])
    for part in parts[1:]:
        owner = getattr(owner, part)
    return owner


def replace(target, value):
    """Sets the attribute TARGET ("torch.cuda.is_available") to VALUE. A target PATCHES does
    not name is a capture bug: it raises before touching the job's process."""
    if declared(target) is None:
        raise KeyError(f"xmem: {target} is replaced but not declared in xmem_patches.PATCHES")
    path, name = target.rsplit(".", 1)
    setattr(_owner(path), name, value)
    replaced.append(target)
