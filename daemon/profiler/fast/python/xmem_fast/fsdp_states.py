"""Where FSDP keeps a rank's parameters, as on a GPU rank (docs/fast-mode.md, "Ranks").

FSDP2's `fully_shard` tells a deferred-init parameter (on the meta device) from a real one by
`is_meta`, and fast mode's tensors are all meta tensors: its host-meta parameters (a model
built on the host) and its device tensors (on the fake GPU) alike. A host-meta parameter is
moved as a host one; with CPU offloading, a device parameter's shard goes to the host.
FSDP1 asks whether a storage is allocated by its data pointer, which a meta storage lacks;
its offloading and a module built on the host are refused, in one line each."""
import xmem_patches as patches

_FSDP2 = "torch.distributed.fsdp._fully_shard."


def install(torch, tracker, unsupported):
    _allocated_by_size(tracker)
    _refuse_fsdp1_host(tracker, unsupported)
    try:
        from torch.distributed.fsdp._fully_shard import _fsdp_init, _fsdp_param
    except ImportError:  # torch 2.4-2.5: FSDP2 under torch.distributed._composable
        return
    _move_host_parameters(torch, tracker, _fsdp_init._move_states_to_device)
    _offload_to_the_host(torch, tracker, _fsdp_param.FSDPParam._init_sharded_param)


def _allocated_by_size(tracker):
    """FSDP1 asks whether a flat parameter's storage is allocated by its data pointer (under
    SHARD_GRAD_OP, the unsharded one kept from the forward for the backward). A meta
    storage has no pointer; on a GPU a storage of any bytes has one: a device tensor is
    answered by its storage's size."""
    try:
        from torch.distributed.fsdp import _flat_param
    except ImportError:
        return
    original = getattr(_flat_param, "_data_ptr_allocated", None)
    if original is None:
        return

    def data_ptr_allocated(tensor):
        if tracker.is_device(tensor):
            return tensor.untyped_storage().nbytes() > 0
        return original(tensor)
    patches.replace("torch.distributed.fsdp._flat_param._data_ptr_allocated", data_ptr_allocated)


def _refuse_fsdp1_host(tracker, unsupported):
    """FSDP1 takes a module built on the host (host-meta parameters here) for deferred init
    and would call its reset_parameters; its CPUOffload would set a device flat parameter's
    data to a host tensor, which a meta tensor cannot take. Neither is modelled: one line
    each, naming the fix, before torch's own error."""
    try:
        from torch.distributed.fsdp import _flat_param, _init_utils
    except ImportError:
        return
    materialize = getattr(_init_utils, "_materialize_meta_module", None)
    flat_param_to = getattr(_flat_param.FlatParamHandle, "flat_param_to", None)
    if materialize is None or flat_param_to is None:
        return

    def materialize_meta_module(root_module, *args, **kwargs):
        if any(tracker.is_host(p) for p in root_module.parameters()):
            unsupported("FSDP1 (FullyShardedDataParallel) of a module built on the host: fast "
                        "mode cannot move it to the GPU for FSDP1; build the model on the GPU "
                        "(device=\"cuda\") before wrapping it, or use FSDP2's fully_shard")
        return materialize(root_module, *args, **kwargs)

    def to(self, *args, **kwargs):
        if tracker.is_device(self.flat_param):
            unsupported("FSDP1's CPUOffload(offload_params=True): fast mode cannot hold FSDP1's "
                        "flat parameters on the host; profile the job without it for an upper "
                        "bound (the shards on the GPU), or use FSDP2's CPUOffloadPolicy")
        return flat_param_to(self, *args, **kwargs)
    patches.replace("torch.distributed.fsdp._init_utils._materialize_meta_module",
                    materialize_meta_module)
    patches.replace("torch.distributed.fsdp._flat_param.FlatParamHandle.flat_param_to", to)


def _move_host_parameters(torch, tracker, original):
    """fully_shard moves the module's parameters and buffers to the GPU, except meta ones,
    which it leaves for the job to materialise. A model built on the host has host-meta
    parameters here: FSDP2 left them on meta and then refused them as never materialised.
    They are moved as torch moves a host tensor: a new device storage each."""
    def move_states_to_device(params, buffers, device):
        with torch.no_grad():
            for t in (*params, *buffers):
                if tracker.is_host(t):
                    t.data = t.to(device)
        return original(params, buffers, device)
    patches.replace(_FSDP2 + "_fsdp_init._move_states_to_device", move_states_to_device)


def _offload_to_the_host(torch, tracker, original):
    """CPUOffloadPolicy: FSDP2 shards a parameter on the GPU and copies the shard to pinned
    host memory, unless the parameter is on meta (deferred init), whose shard it keeps on
    meta. Fast mode's device tensors are meta tensors, so the shards stayed on the device
    (and FSDP2 then refused them as not on the CPU). The shard is copied to the host here,
    as torch copies it on a GPU rank: its parameter, its gradients (FSDP2 copies each
    reduced gradient to the host) and the optimizer's state are then real host tensors in
    the capture, which the trace leaves out, and each all-gather copies the shard back to
    the GPU first, a device block. The device shard torch made first stays in the trace as
    the staging copy a GPU makes in set-up, freed once the host copy replaces it."""
    def init_sharded_param(self, param, *args, **kwargs):
        out = original(self, param, *args, **kwargs)
        if self.offload_to_cpu and tracker.is_device(self._sharded_param_data):
            _shard_to_host(torch, self)
        return out
    patches.replace(_FSDP2 + "_fsdp_param.FSDPParam._init_sharded_param", init_sharded_param)


def _shard_to_host(torch, fsdp_param):
    """The tail of FSDPParam._init_sharded_param, with the padded shard on the host (its
    pin_memory is host memory too: device_mode.py)."""
    padded = fsdp_param._sharded_param_data.cpu()
    dim = fsdp_param.fsdp_placement.dim
    local = padded.view(fsdp_param.padded_sharded_param_size).narrow(
        dim, 0, fsdp_param.sharded_size[dim])
    fsdp_param._sharded_param_data = padded
    fsdp_param.sharded_param = torch.nn.Parameter(
        fsdp_param.to_sharded_dtensor(local),
        requires_grad=fsdp_param.sharded_param.requires_grad)
    fsdp_param._setattr_on_modules(fsdp_param.sharded_param)
