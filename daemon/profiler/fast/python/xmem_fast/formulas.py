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
such a backward keeps the extra storage. Formulas whose
two branches differ otherwise are left: binary_cross_entropy_with_logits' backward (sub/mul
out of place, whose first argument is not always a temporary), masked_fill's value gradient
(`where(...).sum()` against `masked_select(...).sum()`), prod's backward.
"""
import torch

aten = torch.ops.aten

_SCATTER_ADD = ("GatherBackward0", "CummaxBackward0", "CumminBackward0")
_SCATTER = ("MaxBackward0", "MinBackward0", "KthvalueBackward0", "MedianBackward1",
            "NanmedianBackward1", "ModeBackward0", "TopkBackward0", "SortBackward0")


def _index_put_in_place(self, indices, values, accumulate=False):
    return aten._index_put_impl_.default(self, indices, values, accumulate, True)


# out-of-place op -> (its in-place twin, the nodes whose formula calls the twin without a mode)
_TWINS = {
    aten.scatter_add.default: (aten.scatter_add_.default, _SCATTER_ADD),
    aten.scatter.src: (aten.scatter_.src, _SCATTER),
    aten.index_put.default: (_index_put_in_place, ("IndexBackward0",)),
    aten.index_add.default: (aten.index_add_.default, ("IndexSelectBackward0",)),
    aten.masked_scatter.default: (aten.masked_scatter_.default, ("MaskedSelectBackward0",)),
}
_current_node = getattr(torch._C, "_current_autograd_node", None)


def in_place(func):
    """The in-place twin of FUNC where FUNC is a formula's out-of-place branch, else FUNC."""
    twin = _TWINS.get(func)
    if twin is None or _current_node is None or torch.is_grad_enabled():
        # create_graph: the out-of-place op's autograd node would wrap its input as output
        return func
    node = _current_node()
    if node is None or node.name() not in twin[1]:
        return func
    return twin[0]
