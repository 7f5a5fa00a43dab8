"""One rank of a multi-GPU job, without the other ranks (docs/fast-mode.md, "Ranks").

xmem-estimate --world-size N (or a torchrun/accelerate launch it read) runs the script once
per distinct rank role, with the environment torchrun gives a rank (RANK, LOCAL_RANK,
WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and XMEM_WORLD_SIZE=N. The
script's own `init_process_group("nccl" | "gloo" | None, ...)` then reaches xmem's process
group (backend "xmem", `XmemGroup`): every collective returns at once, its outputs the
tensors the caller passed (already of the right shapes, on the fake device), and nothing
waits for a peer. torch's own fake group (`FakeProcessGroup`) is not enough: its works'
futures hold None, where DDP's gradient hook expects the reduced bucket back. So DDP's
Reducer, FSDP2's all-gather buffers and every sharding decision run as torch runs them on a
GPU rank, at the job's world size; what they allocate on the device is in the trace like
any other storage.
"""
import os
import sys

import xmem_patches as patches

from .shape_kernels import KERNELS

# What the job's init_process_group and new_group make, whatever backend it names.
_GROUP_FUNCTIONS = ("init_process_group", "new_group")
_BACKEND = "xmem"


def world_size():
    """N from xmem-estimate; 0 when unset: a job of one process, whose process group (if it
    makes one) is its own."""
    value = os.environ.get("XMEM_WORLD_SIZE", "")
    return int(value) if value.isdigit() else 0


_WORLD = world_size()
# Ops on a wrapper subclass (DTensor) go to the subclass, whose ops on the tensors it wraps
# the storage tracker then sees (AdamW's state of FSDP2's sharded parameters); only for
# ranks, so that one process is traced as before.
WRAPPERS_RUN_THEIR_OPS = _WORLD >= 1


def keeps_host_data(func, args):
    """Whether FUNC is a copy from the device into a real host tensor that torch's C++ makes
    after a collective (DDP's Reducer reads the bucket order rank 0 broadcast when it
    rebuilds its buckets): the host tensor keeps this rank's own values, which are every
    rank's, since every rank runs this one script. Without a world size nothing is kept."""
    if _WORLD < 1 or func is not torch_copy() or len(args) < 2:
        return False
    dst, src = args[0], args[1]
    return not dst.is_meta and src.is_meta


def torch_copy():
    import torch
    return torch.ops.aten.copy_.default


def install(torch, unsupported, note, is_device):
    """Makes the script's process groups xmem's, at this rank, when xmem-estimate gave a
    world size (a launcher's count of 1 included). IS_DEVICE(t): whether T is one of fast
    mode's device tensors (the storage tracker's)."""
    n = world_size()
    if n < 1:
        return
    import torch.distributed as dist
    if not dist.is_available() or not hasattr(dist.ProcessGroup, "allreduce"):
        unsupported(f"--world-size {n}: this torch {torch.__version__} has no "
                    "torch.distributed to run the job's process group in", "")
    _register(torch, dist)
    KERNELS.update(_collective_kernels(torch))
    _note_nccl(torch, note)
    my_rank = int(os.environ.get("RANK", "0"))
    c10d = dist.distributed_c10d
    original_init, original_new = c10d.init_process_group, c10d.new_group

    def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1,
                           rank=-1, store=None, group_name="", pg_options=None,
                           device_id=None):
        # The world and rank are the ones xmem set (torchrun's env://): a rendezvous address
        # or store would wait for peers that never start, and device_id binds the group to a
        # CUDA device this machine lacks.
        extra = {"timeout": timeout} if timeout is not None else {}
        _deepspeed_agreement()
        return original_init(_BACKEND, store=dist.HashStore(), rank=my_rank, world_size=n,
                             group_name=group_name, **extra)

    def new_group(ranks=None, timeout=None, backend=None, pg_options=None, **kwargs):
        kwargs.pop("device_id", None)
        _deepspeed_agreement()
        return original_new(ranks=ranks, timeout=timeout, backend=_BACKEND, **kwargs)

    for name, value in zip(_GROUP_FUNCTIONS, (init_process_group, new_group)):
        patches.replace("torch.distributed." + name, value)
        patches.replace("torch.distributed.distributed_c10d." + name, value)
    # FSDP2's default mesh is on the accelerator torch's C++ reports, which is the CPU here;
    # a GPU rank's is CUDA, as torch.accelerator's stand-in already answers.
    patches.replace("torch._C._get_accelerator", lambda *args: torch.device("cuda"))
    # DDP's start-up check that every rank holds the same parameter shapes reads the
    # gathered shapes back with .item(): every rank runs this one script, so they agree.
    # On a GPU it holds a tensor of a few longs per parameter for the check's duration, a
    # small-pool block the trace leaves out.
    patches.replace("torch.distributed._verify_params_across_processes",
                    lambda process_group, tensors, logger=None: None)
    _fsdp1_on_the_device(is_device)


# DeepSpeed ZeRO's checks that the ranks agree on a list of ints, in the module their
# callers reach them through (by its globals).
_DEEPSPEED_ZERO_UTILS = "deepspeed.runtime.zero.utils"


def _deepspeed_agreement():
    """DeepSpeed ZeRO-3 checks that every rank holds the same list of ints (the order its
    modules ran in, parameter ids): it broadcasts rank 0's length and list, then reads them
    back (.item()). Every rank runs this one script, so rank 0's list is this rank's (a
    non-zero rank would otherwise read its own placeholder, -1, back). On a GPU the check
    holds a tensor of a few longs for its duration, a small-pool block the trace leaves out.
    Installed when the job makes a process group: DeepSpeed is imported by then
    (deepspeed.initialize makes the group, or the job made it after importing DeepSpeed)."""
    utils = sys.modules.get(_DEEPSPEED_ZERO_UTILS)
    if utils is None or getattr(utils.get_lst_from_rank0, "__module__", None) == __name__:
        return
    patches.replace(_DEEPSPEED_ZERO_UTILS + ".assert_lst_len_same_as_other_ranks",
                    _lists_agree)
    patches.replace(_DEEPSPEED_ZERO_UTILS + ".get_lst_from_rank0", _rank0_list)


def _lists_agree(lst):
    return None


def _rank0_list(lst):
    return list(lst)


def _fsdp1_on_the_device(is_device):
    """FSDP1 (FullyShardedDataParallel) materialises a module whose parameters or buffers are
    on the meta device (reset_parameters, or the job's param_init_fn). Fast mode's device
    tensors are meta tensors; on a GPU rank such a module is already on the GPU, with nothing
    to materialise. A module the job itself built on meta is materialised as before."""
    try:
        from torch.distributed.fsdp import _init_utils
    except ImportError:
        return
    original = getattr(_init_utils, "_need_to_materialize_module", None)
    if original is None:
        return

    def need_to_materialize(module, ignored_params, ignored_modules):
        tensors = [t for t in (*module.parameters(), *module.buffers()) if t.is_meta]
        if tensors and all(is_device(t) for t in tensors):
            return False, False
        return original(module, ignored_params, ignored_modules)
    patches.replace("torch.distributed.fsdp._init_utils._need_to_materialize_module",
                    need_to_materialize)


def _register(torch, dist):
    """Backend "xmem": a process group of one real rank that plays its part in each
    collective and returns. The outputs keep what the caller put there (fast mode's device
    tensors hold no data anyway); what a GPU rank allocates for a collective is the
    caller's (DDP's buckets, FSDP's all-gather outputs), which the trace records."""
    if _BACKEND in dist.Backend.backend_list:
        return
    c10d = torch._C._distributed_c10d

    def done(value):
        future = torch.futures.Future()
        future.set_result(value)
        return c10d._create_work_from_future(future)

    class XmemGroup(dist.ProcessGroup):
        def __init__(self, rank, size):
            super().__init__(rank, size)
            self._size = size
            self._name = ""

        # torch names each group after making it; a Python group keeps the name itself (a
        # device mesh looks its groups up by it).
        @property
        def group_name(self):
            return self._name

        def _set_group_name(self, name):
            self._name = name

        def size(self):
            return self._size

        def getBackendName(self):
            return _BACKEND

        # Each collective: the tensors it writes, in the shape the caller passed them.
        def allreduce(self, tensors, opts=None):
            return done(tensors)

        def allreduce_coalesced(self, tensors, opts=None):
            return done(tensors)

        def broadcast(self, tensors, opts=None):
            return done(tensors)

        def reduce(self, tensors, opts=None):
            return done(tensors)

        def allgather(self, outputs, inputs, opts=None):
            return done(outputs)

        def all_gather_single(self, output, input, opts=None):
            return done([output])

        def all_gather_single_coalesced(self, outputs, inputs, opts=None):
            return done(outputs)

        def reduce_scatter(self, outputs, inputs, opts=None):
            return done(outputs)

        def reduce_scatter_single(self, output, input, opts=None):
            return done([output])

        def reduce_scatter_single_coalesced(self, outputs, inputs, opts=None):
            return done(outputs)

        def alltoall(self, outputs, inputs, opts=None):
            return done(outputs)

        def all_to_all_single(self, output, input, output_splits, input_splits, opts=None):
            return done([output])

        def gather(self, outputs, inputs, opts=None):
            return done(outputs)

        def scatter(self, outputs, inputs, opts=None):
            return done(outputs)

        def barrier(self, opts=None):
            return done([])

    def create(store, rank, size, timeout):
        return XmemGroup(rank, size)

    dist.Backend.register_backend(_BACKEND, create, devices=["cpu", "cuda"])


def _collective_kernels(torch):
    """The functional collectives (`_c10d_functional`, DTensor's redistribute: tensor
    parallelism's all-reduces and all-gathers) whose meta kernels allocate where a GPU does
    not. On a GPU `wait_tensor` returns the tensor it waited for, and `_wrap_tensor_autograd`
    wraps its input in an AsyncCollectiveTensor (the same storage); their meta kernels
    return a new tensor (`empty_like`), one more copy of every TP all-reduce's output.
    Here both return a view of their input: nothing allocated. The collectives themselves
    allocate what their CUDA kernels do (all_reduce and broadcast a clone of the input,
    all_gather_into_tensor N times it, reduce_scatter_tensor 1/N), which their own kernels
    do on meta too."""
    ops = getattr(torch.ops, "_c10d_functional", None)
    names = ("wait_tensor", "_wrap_tensor_autograd")
    found = [getattr(ops, name, None) for name in names] if ops is not None else []

    def same_storage(tensor, *args, **kwargs):
        return tensor.view(tensor.shape)
    return {op.default: same_storage for op in found if op is not None}


def run_backward_at_the_boundary(torch, device_mode):
    """A backward runs with the device boundary (a function mode) active, as the forward
    does. Python code inside the forward's mode call runs with that mode off, so a backward
    ran without it; FSDP2's backward hooks then saw their all-gather outputs on `meta`, not
    on the GPU, and found no device to wait on. Only for ranks: one process keeps its
    backward as it was."""
    if world_size() < 1:
        return
    original = torch.autograd.graph._engine_run_backward

    def engine_run_backward(*args, **kwargs):
        with device_mode:
            return original(*args, **kwargs)

    for target in ("torch.autograd.graph._engine_run_backward",
                   "torch.autograd._engine_run_backward"):
        patches.replace(target, engine_run_backward)


def _note_nccl(torch, note):
    """`M nccl VERSION`: the NCCL the job's torch loads on a GPU node, whose own buffers the
    estimate adds to each rank (the catalog's `nccl` term). A torch without NCCL writes
    none; the estimate then takes the catalog's newest term."""
    try:
        version = torch.cuda.nccl.version()
    except Exception:  # a CPU-only torch, or no libnccl where this runs
        return
    note("nccl", ".".join(str(v) for v in version) if isinstance(version, tuple) else version)
