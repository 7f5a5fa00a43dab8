"""Backward formulas that fill a fresh zeros tensor, run in place as without a dispatch mode.

Several of autograd's formulas (torch/csrc/autograd/FunctionsManual.cpp) build the gradient
in a tensor of zeros they just made, and write into it in place unless an argument is
"subclass-like" (`at::areAnyTensorSubclassLike`, ATen/TensorSubclassLikeUtils.h), where they
allocate an out-of-place copy instead, for functorch and composite compliance. While any
TorchDispatchMode is active, `isTensorSubclassLike` answers true for every tensor, so fast
mode's own StorageTracker sends them down the out-of-place branch: one more
gradient-sized storage each, which a CUDA tensor (no subclass, no mode) never takes. The
exact capture has no dispatch mode and takes the in-place branch, as a GPU does.

Which ops, from each formula's two branches (the node the engine runs tells the formula):

* gather_backward (GatherBackward0, also take_along_dim's) and cummaxmin_backward
  (CummaxBackward0, CumminBackward0): `scatter_add` -> `scatter_add_`;
* value_selecting_reduction_backward (max/min/kthvalue/median/nanmedian/mode along a dim,
  topk, sort): `scatter` -> `scatter_`;
* index_backward (IndexBackward0, `x[idx]`): `index_put(accumulate=True)` ->
  `_index_put_impl_(accumulate=True, unsafe=True)`;
* index_select_backward (IndexSelectBackward0): `index_add` -> `index_add_`;
* masked_select_backward (MaskedSelectBackward0): `masked_scatter` -> `masked_scatter_`.

In each, the out-of-place op's first argument is the formula's own fresh zeros, used once,
so running the in-place twin on it gives the plain branch's storages exactly (as
accumulate.py does for the engine's gradient sums). Not under create_graph (grad mode on in
backward), where the twin would return an input as the output of an op autograd records;
such a backward keeps the extra storage.

Two formulas differ otherwise:

* binary_cross_entropy_with_logits_backward (BinaryCrossEntropyWithLogitsBackward0): the plain
  branch runs `input.sigmoid().sub_(target)`, `grad_input.mul_(grad)`, `.mul_(weight)` (with
  pos_weight `t.add(1).sub_(target).mul_(input.sigmoid()).sub_(t)`), the subclass branch
  `sub`, `mul` out of place: one input-sized storage more per step. Not every `sub`/`mul`
  of the node may be turned: `pos_weight.mul(target)` is out of place in both branches. The
  ones the plain branch runs in place are exactly those whose first argument the node itself
  made (`sigmoid`'s result, `add`'s, an earlier `sub`'s or `mul`'s), so `made` remembers the
  node's storages and `in_place` turns only those.
* masked_fill_backward (MaskedFillBackward1, the gradient of a tensor `value`): plain
  `grad.masked_select(mask).sum()`, subclass `at::where(mask, grad, 0).sum()`: `where` becomes
  `masked_select`, which fast mode sizes by its upper bound, every mask entry true
  (shape_kernels.py): the same bytes as `where`'s, in the op a GPU runs.

prod's backward (cumprod/flip/cat against div/eq/sum) is left.
"""
import torch

from .shape_kernels import masked_select_upper_bound

aten = torch.ops.aten

_SCATTER_ADD = ("GatherBackward0", "CummaxBackward0", "CumminBackward0")
_SCATTER = ("MaxBackward0", "MinBackward0", "KthvalueBackward0", "MedianBackward1",
            "NanmedianBackward1", "ModeBackward0", "TopkBackward0", "SortBackward0")


def index_put_in_place(self, indices, values, accumulate=False):
    return aten._index_put_impl_.default(self, indices, values, accumulate, True)


index_put_in_place.aten_op = aten._index_put_impl_.default  # what the trace names it


# out-of-place op -> (its in-place twin, the nodes whose formula calls the twin without a mode)
_TWINS = {
    aten.scatter_add.default: (aten.scatter_add_.default, _SCATTER_ADD),
    aten.scatter.src: (aten.scatter_.src, _SCATTER),
    aten.index_put.default: (index_put_in_place, ("IndexBackward0",)),
    aten.index_add.default: (aten.index_add_.default, ("IndexSelectBackward0",)),
    aten.masked_scatter.default: (aten.masked_scatter_.default, ("MaskedSelectBackward0",)),
}
_current_node = getattr(torch._C, "_current_autograd_node", None)


def _masked_select(mask, grad, other):
    if grad.is_meta:
        return masked_select_upper_bound(grad, mask)  # as the tracker runs masked_select
    return aten.masked_select.default(grad, mask)


_masked_select.aten_op = aten.masked_select.default
# subclass branch's op -> (the plain branch's, the nodes): not a twin, another op
_PLAIN = {aten.where.self: (_masked_select, ("MaskedFillBackward1",))}

# the node's own temporaries: out-of-place op -> in-place twin when its first argument is one
_BCE = "BinaryCrossEntropyWithLogitsBackward0"
_ON_MADE = {aten.sub.Tensor: aten.sub_.Tensor, aten.mul.Tensor: aten.mul_.Tensor}
# the ops whose results the formula goes on to modify (the others it only reads)
_MAKERS = {aten.sigmoid.default, aten.add.Tensor, aten.add.Scalar, aten.sub.Tensor,
           aten.mul.Tensor}
_storage = getattr(torch.Tensor, "untyped_storage", None) or torch.Tensor._storage  # 1.13


class _Made:
    """The storages the running BCE-with-logits node made, as weak references (a storage
    address can be reused once its storage dies)."""

    node = None
    refs = {}

    @classmethod
    def reset(cls, node):
        for ref in cls.refs.values():
            torch.UntypedStorage._free_weak_ref(ref)
        cls.node, cls.refs = node, {}

    @classmethod
    def holds(cls, t):
        ref = cls.refs.get(_storage(t)._cdata)
        return ref is not None and not torch.UntypedStorage._expired(ref)


def _node():
    """The running backward node, or None (also under create_graph, where the out-of-place
    op's autograd node would wrap its input as output)."""
    if _current_node is None or torch.is_grad_enabled():
        return None
    return _current_node()


def in_place(func, args=()):
    """The in-place twin of FUNC where FUNC is a formula's out-of-place branch, else FUNC."""
    twin = _TWINS.get(func) or _PLAIN.get(func)
    made = _ON_MADE.get(func)
    if twin is None and made is None:
        return func
    node = _node()
    if node is None:
        return func
    if twin is not None:
        return twin[0] if node.name() in twin[1] else func
    if (node.name() == _BCE and id(node) == _Made.node and args
            and isinstance(args[0], torch.Tensor) and _Made.holds(args[0])):
        return made
    return func


def made(func, out):
    """Remembers OUT's storages where the running node is a BCE-with-logits backward."""
    if func not in _MAKERS:
        return
    node = _node()
    if node is None or node.name() != _BCE:
        return
    if id(node) != _Made.node:
        _Made.reset(id(node))
    for t in out if isinstance(out, (list, tuple)) else (out,):
        if isinstance(t, torch.Tensor):
            storage = _storage(t)
            if storage._cdata not in _Made.refs:
                _Made.refs[storage._cdata] = storage._weak_ref()
