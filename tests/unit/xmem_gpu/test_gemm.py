"""Unit tests of xmem_gpu.gemm, the copies cuBLAS's batched GEMM makes (run by
tests/integration/106-fast-exact-cuda-kernels.sh with a torch 2.x Python; meta tensors stand
for device tensors)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../daemon/profiler/python"))
import torch  # noqa: E402

from xmem_gpu import gemm  # noqa: E402


def meta(*shape, dtype=torch.float32):
    return torch.empty(*shape, dtype=dtype, device="meta")


class Copies(unittest.TestCase):
    def test_contiguous_and_transposed_operands_are_read_in_place(self):
        a, b = meta(4, 8, 16), meta(4, 16, 32)
        out = meta(4, 8, 32)
        self.assertEqual(gemm.copies(out, a, b), [])
        self.assertEqual(gemm.copies(out, a, meta(4, 32, 16).transpose(1, 2)), [])

    def test_an_expanded_gradient_is_cloned_whole_once(self):
        grad = meta(1, 1, 1).expand(4, 8, 32)  # sum()'s gradient: every stride 0
        w = meta(4, 32, 16)
        self.assertEqual(gemm.copies(meta(4, 8, 16), grad, w), [((4, 8, 32), torch.float32)])
        self.assertEqual(gemm.copies(meta(4, 16, 32), w.transpose(1, 2), grad),
                         [((4, 8, 32), torch.float32)])

    def test_stride_zero_in_one_inner_dim(self):
        grad = meta(4, 1, 32, dtype=torch.bfloat16).expand(4, 8, 32)  # broadcast over rows
        self.assertEqual(gemm.copies(meta(4, 8, 16, dtype=torch.bfloat16), grad,
                                     meta(4, 32, 16, dtype=torch.bfloat16)),
                         [((4, 8, 32), torch.bfloat16)])

    def test_a_batch_expanded_operand_is_not_copied(self):
        w = meta(1, 32, 16).expand(4, 32, 16)  # stride 0 over the batch only
        self.assertEqual(gemm.copies(meta(4, 8, 16), meta(4, 8, 32), w), [])

    def test_both_operands_in_the_kernels_order(self):
        g1 = meta(1, 1, 1).expand(4, 8, 32)
        g2 = meta(1, 1, 1).expand(4, 32, 16)
        # A contiguous result is read row-major (transpose_result): batch2 is prepared first.
        self.assertEqual(gemm.copies(meta(4, 8, 16), g1, g2),
                         [((4, 32, 16), torch.float32), ((4, 8, 32), torch.float32)])

    def test_an_unusable_result_is_cloned_first(self):
        out = meta(8, 4, 16).transpose(0, 1)[:, :, ::2]  # no unit inner stride
        self.assertEqual(gemm.copies(out, meta(4, 8, 32), meta(4, 32, 8)),
                         [((4, 8, 8), torch.float32)])

    def test_empty_products_copy_nothing(self):
        grad = meta(1, 1, 1).expand(4, 8, 0)
        self.assertEqual(gemm.copies(meta(4, 8, 16), grad, meta(4, 0, 16)), [])


if __name__ == "__main__":
    unittest.main()
