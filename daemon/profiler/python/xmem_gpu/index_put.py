"""`index_put_(accumulate=True)` on a GPU, for both captures: the sort's temporaries.

The backward of advanced indexing (`x[idx]`, IndexBackward0) accumulates the gradient into
zeros with `_index_put_impl_(accumulate=True)`; `index_put_`/`index_put` with
`accumulate=True` call it too. On a CUDA tensor, with accumulate (or deterministic
algorithms), it runs `index_put_with_sort_kernel` (aten/src/ATen/native/cuda/Indexing.cu;
the dispatch in TensorAdvancedIndexing.cpp's `_index_put_impl_` is inferred, that file was
not read), which allocates and frees before it returns:

* `self.contiguous()` when `self` is not contiguous (copied back at the end);
* in `makeLinearIndex`: int32 indices converted to int64; per indexed dimension
  `wrapIndexOnce` (with range checks, `unsafe` false: a 0-d `max()` and `min()` read by
  `.item()`), its `remainder`, and `* stride`; the first product becomes `linearIndex`, the
  others are added to it and freed; all of the broadcast index shape, int64;
* `expandedValue.contiguous()` when the value is broadcast (or not contiguous);
* when `src` (`self` with the indexed dimensions moved to the front) is not contiguous, its
  contiguous copy;
* `sorted_indices` and `orig_indices` (`empty_like(linearIndex)`), then `range`
  (`arange(num_indices)`) and cub's radix-sort temporary storage (`radix_sort_pairs`,
  aten/src/ATen/cuda/cub.cuh, not read: the alternate key and value buffers cub's
  non-DoubleBuffer `SortPairs` needs, `2·8·N`, its histograms left out), both freed right
  after the sort.

The CPU kernel accumulates through a TensorIterator over broadcast views, a Meta kernel
allocates nothing: both captures add what `program` returns. Boolean-mask indices are left
out: `makeLinearIndex` turns them into `nonzero()`, whose size is the mask's count of true,
which fast mode cannot know.
"""
import torch

ALLOC, FREE = "alloc", "free"
_INT64 = torch.int64


def takes_sort(accumulate):
    """Whether a CUDA `_index_put_impl_` runs index_put_with_sort_kernel."""
    return bool(accumulate) or torch.are_deterministic_algorithms_enabled()


def _linear_index(defined, shape, unsafe, steps):
    """makeLinearIndex's steps for DEFINED indices broadcast to SHAPE; the name of linearIndex."""
    for i, index in enumerate(defined):
        if index.dtype == torch.int32:
            steps += [(ALLOC, f"long{i}", tuple(index.shape), _INT64)]
    if not unsafe:
        for _ in defined:
            steps += [(ALLOC, "max", (), _INT64), (FREE, "max"),
                      (ALLOC, "min", (), _INT64), (FREE, "min")]
    for i in range(len(defined)):
        steps += [(ALLOC, f"remainder{i}", shape, _INT64), (ALLOC, f"index{i}", shape, _INT64),
                  (FREE, f"remainder{i}")]
        if i:
            steps += [(FREE, f"index{i}")]  # added to linearIndex (`index0`)
    # makeLinearIndex's converted indices die with it
    steps += [(FREE, f"long{i}") for i, index in enumerate(defined) if index.dtype == torch.int32]
    return "index0"


def _front(self_shape, positions):
    """Whether moving the indexed dimensions to the front leaves a contiguous tensor."""
    order = positions + [d for d in range(len(self_shape)) if d not in positions]
    return torch.empty(self_shape, device="meta").permute(order).is_contiguous()


def program(self, indices, value, accumulate, unsafe=False):
    """[(ALLOC, name, shape, dtype) | (FREE, name)]: what the CUDA kernel allocates and frees,
    in its order, for `_index_put_impl_(self, indices, value, accumulate, unsafe)` on a device
    tensor; [] where it runs no sort or where the sizes depend on values (a boolean mask)."""
    defined = [(d, i) for d, i in enumerate(indices) if i is not None]
    if not takes_sort(accumulate) or not defined:
        return []
    if any(i.dtype in (torch.bool, torch.uint8) for _, i in defined):
        return []
    positions = [d for d, _ in defined]
    shape = tuple(torch.broadcast_shapes(*(tuple(i.shape) for _, i in defined)))
    steps = []
    if not self.is_contiguous():
        steps += [(ALLOC, "self", tuple(self.shape), self.dtype)]
    linear = _linear_index([i for _, i in defined], shape, unsafe, steps)
    num = 1
    for s in shape:
        num *= s
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    before = 1 if adjacent else 0  # non-adjacent indices go to the front: nothing before
    for d in range(positions[0] if adjacent else 0):
        before *= self.shape[d]
    after = 1
    for d in range(len(self.shape)):
        if d not in positions and (not adjacent or d > positions[-1]):
            after *= self.shape[d]
    wanted = num * before * after
    if value.numel() < wanted or not value.is_contiguous():
        steps += [(ALLOC, "value", (wanted,) if value.numel() < wanted else tuple(value.shape),
                   value.dtype)]
    if num > 0 and after > 0:
        permuted = not adjacent and not _front(tuple(self.shape), positions)
        if permuted:
            steps += [(ALLOC, "src", tuple(self.shape), self.dtype)]
        steps += [(ALLOC, "sorted", (num,), _INT64), (ALLOC, "orig", (num,), _INT64),
                  (ALLOC, "range", (num,), _INT64), (ALLOC, "cub", (2 * 8 * num,), torch.uint8),
                  (FREE, "cub"), (FREE, "range"), (FREE, "orig"), (FREE, "sorted")]
        if permuted:
            steps += [(FREE, "src")]
    live = [step[1] for step in steps if step[0] == ALLOC]
    freed = {step[1] for step in steps if step[0] == FREE}
    steps += [(FREE, name) for name in reversed(live) if name not in freed and name != linear]
    return steps + [(FREE, linear)]


def run(steps, allocate, after_free=lambda: None):
    """Plays STEPS: ALLOCATE(shape, dtype) makes a tensor on the capture's device, a free
    drops it, then AFTER_FREE() (fast mode writes the free there)."""
    held = {}
    for step in steps:
        if step[0] == ALLOC:
            held[step[1]] = allocate(step[2], step[3])
        else:
            del held[step[1]]
            after_free()
