"""Unit tests of xmem_fast.formulas: under a dispatch mode that applies it, a backward formula
runs the ops it runs without one (the branch a CUDA tensor takes), by name and in order (run
by tests/integration/106-fast-exact-cuda-kernels.sh with a torch 2.x Python)."""
import os
import sys
import unittest

here = os.path.dirname(__file__)
sys.path[:0] = [os.path.join(here, "../../../daemon/profiler/python"),
                os.path.join(here, "../../../daemon/profiler/fast/python")]
import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from xmem_fast import formulas  # noqa: E402

WATCHED = {"sigmoid", "sub", "sub_", "mul", "mul_", "add", "div_", "where", "masked_select"}


class _Applying(TorchDispatchMode):
    """Runs each op as fast mode's tracker does with formulas.py, and names what ran."""

    def __init__(self, apply=True):
        super().__init__()
        self.apply = apply
        self.ran = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.apply:
            func = formulas.in_place(func, args)
        out = func(*args, **(kwargs or {}))
        if self.apply:
            formulas.made(func, out)
        schema = getattr(getattr(func, "aten_op", func), "_schema", None)
        name = schema.name.split("::")[1] if schema is not None else str(func)
        if name in WATCHED:
            self.ran.append(name)
        return out


def plain(loss_of, *shapes):
    """The watched ops a plain backward (no mode: a CUDA tensor's branch) runs, in order."""
    tensors = [torch.rand(*s, requires_grad=True) for s in shapes]
    loss = loss_of(*tensors)
    with torch.autograd.profiler.profile() as prof:
        loss.backward()
    return [e.name.split("::")[1] for e in prof.function_events
            if e.name.startswith("aten::") and e.name.split("::")[1] in WATCHED]


def under_mode(loss_of, *shapes, apply=True):
    tensors = [torch.rand(*s, requires_grad=True) for s in shapes]
    with _Applying(apply) as mode:
        loss_of(*tensors).backward()
    return mode.ran


def bce(x, t):
    return torch.nn.functional.binary_cross_entropy_with_logits(x, t.detach())


def bce_weighted(x, t, w, pw):
    return torch.nn.functional.binary_cross_entropy_with_logits(
        x, t.detach(), weight=w.detach(), pos_weight=pw.detach())


def masked_fill_value(x, v):
    return x.masked_fill(x.detach() > 0.5, v.sum()).sum()


class Formulas(unittest.TestCase):
    def check(self, loss_of, *shapes):
        want = plain(loss_of, *shapes)
        self.assertNotEqual(under_mode(loss_of, *shapes, apply=False), want,
                            "the formula no longer has a subclass branch: drop its twin")
        self.assertEqual(under_mode(loss_of, *shapes), want)

    def test_bce_with_logits(self):
        self.check(bce, (16, 5), (16, 5))

    def test_bce_with_logits_weight_and_pos_weight(self):
        """pos_weight.mul(target) is out of place on both branches: it must stay."""
        self.check(bce_weighted, (16, 5), (16, 5), (16, 5), (5,))

    def test_masked_fill_value_gradient(self):
        self.check(masked_fill_value, (16, 5), (3,))


if __name__ == "__main__":
    unittest.main()
