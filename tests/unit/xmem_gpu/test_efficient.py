"""Unit tests of xmem_gpu.efficient, the buffers of a GPU's memory-efficient attention
backward (run by tests/integration/106-fast-exact-cuda-kernels.sh with a torch 2.x Python; meta
tensors stand for device tensors). Sizes worked by hand from kernel_backward.h's
workspace_size() and cutlassB.h's kernel lists, as docs/cuda-semantics.md (K6) sets them out."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../daemon/profiler/python"))
import torch  # noqa: E402

from xmem_gpu import efficient  # noqa: E402
from xmem_gpu.index_put import ALLOC, FREE  # noqa: E402

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
U8 = torch.uint8


def workspace(dtype, cc, b, heads, m, n, d, dv=None, dropout=False):
    return efficient.workspace_bytes(dtype, cc, b, heads, m, n, d, dv or d, dropout)


def bhmk(b, heads, m, d, dtype=F32):
    """(B, nH, M, K) as SDPA sees a transposed (B, M, nH, K) projection."""
    return torch.empty(b, m, heads, d, dtype=dtype, device="meta").transpose(1, 2)


class Workspace(unittest.TestCase):
    def test_fp32_grad_q_accumulator(self):
        """fp32, head dim 64, 128 queries: the 64x64 kernel, 2 query blocks x 1 head-dim block,
        each 16 B of lock header and 64 x 64 floats: 32,800 B a batch and head; fp32 computes
        delta outside the kernel."""
        for cc in (80, 86, 89, 90, 75, 70):
            self.assertEqual(workspace(F32, cc, 4, 8, 128, 128, 64), (32 * 32800, False), cc)
        # 100 queries still take two blocks; a head dim of 80 two head-dim blocks
        self.assertEqual(workspace(F32, 80, 1, 1, 100, 100, 64), (32800, False))
        # sm80's fp32 list takes the 128-row kernel for head dims 65-128: 1 x 2 tiles of
        # 16 B + 128 x 64 floats
        self.assertEqual(workspace(F32, 80, 1, 1, 128, 128, 80), (2 * (16 + 4 * 8192), False))

    def test_no_workspace_before_volta(self):
        """sm50-69: no key splitting, an fp32 output needs no accumulator: no workspace."""
        self.assertEqual(workspace(F32, 61, 4, 8, 128, 128, 64), (0, False))
        # a 16-bit output still accumulates dQ in fp32 there
        self.assertEqual(workspace(F16, 61, 1, 1, 128, 128, 64)[0], 32800)

    def test_half_kernels(self):
        """16-bit: the kernel computes delta; dK/dV accumulate in registers while the head dim
        fits the block's rows."""
        self.assertEqual(workspace(F16, 80, 4, 8, 128, 128, 64), (32 * 32800, True))
        # head dim 96 on an RTX 30/40 (cc 86, 89): the 128x64 k96 kernel, 1 x 2 tiles of 16 B +
        # 128 x 64 floats; with dropout that kernel is not built: 128x128 k128, 1 tile
        self.assertEqual(workspace(BF16, 86, 1, 1, 128, 128, 96), (65568, True))
        self.assertEqual(workspace(BF16, 86, 1, 1, 128, 128, 96, dropout=True), (65552, True))
        self.assertEqual(workspace(BF16, 80, 1, 1, 128, 128, 96), (65552, True))

    def test_half_key_value_accumulators(self):
        """Head dim 256 on an A100: the 128x64 k65536 kernel keeps dK and dV in fp32 global
        memory, one per key split: ceil(1024 / 64) = 16 splits, capped at 200 // (2 x 8) = 12;
        12 x 64 x (256 + 256) floats, plus 8 x 4 dQ tiles of 16 B + 128 x 64 floats."""
        floats = 12 * 64 * 512 + 32 * (4 + 8192)
        self.assertEqual(workspace(F16, 80, 2, 8, 1024, 1024, 256), (16 * floats * 4, True))
        # sm70's kernel with dK/dV outside registers leaves delta to the expression
        self.assertFalse(workspace(F16, 70, 2, 8, 1024, 1024, 256)[1])
        self.assertTrue(workspace(F16, 70, 2, 8, 1024, 1024, 128)[1])

    def test_no_kernel(self):
        """bfloat16 below sm80 has no kernel: nothing is added."""
        self.assertIsNone(workspace(BF16, 75, 1, 1, 128, 128, 64))
        q = bhmk(1, 1, 128, 64, BF16)
        self.assertEqual(efficient.backward_steps(q, q, q, 0.0, (7, 5)), [])


class Steps(unittest.TestCase):
    def test_gradient_copy(self):
        """A gradient that is a transposed contiguous (B, M, nH, Kv) tensor needs no copy; a
        (B, nH, M, Kv)-contiguous one is copied whole."""
        self.assertEqual(efficient.gradient_copy(bhmk(4, 8, 128, 64)), [])
        plain = torch.empty(4, 8, 128, 64, device="meta")
        self.assertEqual(efficient.gradient_copy(plain), [((4, 128, 8, 64), F32)])
        self.assertEqual(efficient.gradient_copy(plain.expand(4, 8, 128, 64)[0]), [])

    def test_fp32_order(self):
        """fp32: the product, its sum, delta (the transposed sum made contiguous), the
        expression's temporaries freed, then the workspace; delta freed before it."""
        q = bhmk(4, 8, 128, 64)
        self.assertEqual(efficient.backward_steps(q, q, q, 0.0, (8, 0)), [
            (ALLOC, "product", (4, 128, 8, 64), F32), (ALLOC, "sum", (4, 128, 8), F32),
            (ALLOC, "delta", (4, 8, 128), F32), (FREE, "sum"), (FREE, "product"),
            (ALLOC, "workspace", (32 * 32800,), U8), (FREE, "delta"), (FREE, "workspace")])

    def test_one_head(self):
        """With one head the transposed sum is contiguous: it is delta, no copy."""
        q = bhmk(2, 1, 128, 64)
        steps = efficient.backward_steps(q, q, q, 0.0, (8, 0))
        self.assertEqual(steps[:3], [(ALLOC, "product", (2, 128, 1, 64), F32),
                                     (ALLOC, "delta", (2, 128, 1), F32), (FREE, "product")])

    def test_half_order(self):
        """16-bit on sm80: the kernel fills an empty delta (16 query blocks of 16 B + 64 x 64
        floats a batch and head); sm70 with dK/dV in global memory
        casts both operands to fp32 first."""
        q = bhmk(2, 8, 1024, 64, F16)
        self.assertEqual(efficient.backward_steps(q, q, q, 0.0, (8, 0)), [
            (ALLOC, "delta", (2, 8, 1024), F32), (ALLOC, "workspace", (16 * 16 * 16400,), U8),
            (FREE, "delta"), (FREE, "workspace")])
        q = bhmk(2, 8, 1024, 256, F16)
        names = [s[1] for s in efficient.backward_steps(q, q, q, 0.0, (7, 0)) if s[0] == ALLOC]
        self.assertEqual(names, ["dO", "O", "product", "sum", "delta", "workspace"])


if __name__ == "__main__":
    unittest.main()
