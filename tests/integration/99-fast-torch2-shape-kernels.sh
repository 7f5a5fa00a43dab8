#!/usr/bin/env bash
# Fast mode's shape-only batch-norm kernels (xmem_fast/shape_kernels.py, torch 2.x, for speed)
# must return what torch's own Meta kernels return: the same sizes, strides, dtypes and
# storage bytes, over dtypes, memory formats, train and eval, with and without affine and
# running stats, and every backward output mask. A drift would change fast mode's traces.
source "$(dirname "$0")/90-fast-torch2-common.bash"
FAST_PYDIR=$XMEM_SRC/daemon/profiler/fast/python "$VPY" - <<'PY'
import itertools
import os
import sys

import torch

# not PYTHONPATH: its sitecustomize would arm. xmem_gpu (the shared GPU rules) sits beside.
sys.path[:0] = [os.environ["FAST_PYDIR"], os.environ["FAST_PYDIR"] + "/../../python"]
from xmem_fast.shape_kernels import KERNELS

aten = torch.ops.aten
forward, backward = aten.native_batch_norm.default, aten.native_batch_norm_backward.default
assert forward in KERNELS and backward in KERNELS, "batch norm has no shape kernel"


def described(outputs):
    return [None if t is None else
            (tuple(t.shape), t.stride(), t.dtype, t.untyped_storage().nbytes())
            for t in outputs]


def meta(shape, dtype):
    return torch.empty(shape, dtype=dtype, device="meta")


checked = 0
cases = itertools.product((torch.float32, torch.float16, torch.bfloat16), (False, True),
                          (False, True), (True, False), (True, False), (True, False),
                          ((4, 8, 5, 5), (4, 8, 7), (4, 8)))
for dtype, fp32_params, channels_last, training, affine, stats, shape in cases:
    if (channels_last and len(shape) != 4) or (not training and not stats):
        continue
    x = meta(shape, dtype)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    pdtype = torch.float32 if fp32_params else dtype
    w, b = (meta(8, pdtype), meta(8, pdtype)) if affine else (None, None)
    rm, rv = (meta(8, pdtype), meta(8, pdtype)) if stats else (None, None)
    case = (dtype, pdtype, channels_last, training, affine, stats, shape)
    want = forward(x, w, b, rm, rv, training, 0.1, 1e-5)
    got = KERNELS[forward](x, w, b, rm, rv, training, 0.1, 1e-5)
    assert described(got) == described(want), \
        f"forward {case}: {described(got)} != {described(want)}"
    masks = ([True, True, True], [True, False, False], [False, True, True], [False, False, True])
    for mask in masks:
        args = (torch.empty_like(x), x, w, rm, rv, want[1], want[2], training, 1e-5, mask)
        want_b, got_b = backward(*args), KERNELS[backward](*args)
        assert described(got_b) == described(want_b), \
            f"backward {case} {mask}: {described(got_b)} != {described(want_b)}"
    checked += 1
assert checked > 50, checked
print(f"ok: batch norm shape kernels match torch's Meta kernels in {checked} cases")
PY
