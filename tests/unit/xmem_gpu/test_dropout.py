"""Unit tests of xmem_gpu.dropout, the GPU's dropout both captures apply (run by
tests/integration/90-fast-torch2-sdpa-rules.sh with a torch 2.x Python; meta tensors stand
for device tensors)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../daemon/profiler/python"))
import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from xmem_gpu import dropout  # noqa: E402


class _Allocations(TorchDispatchMode):
    """The dtypes of the tensors each op returns, in order."""

    def __init__(self):
        super().__init__()
        self.dtypes = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.dtypes.append(out.dtype)
        return out


class Decision(unittest.TestCase):
    def test_training_with_0_lt_p_lt_1_takes_native_dropout(self):
        self.assertTrue(dropout.takes_native_dropout(0.1, True, 10))

    def test_eval_p0_p1_and_empty_take_dropout_impl(self):
        self.assertFalse(dropout.takes_native_dropout(0.1, False, 10))
        self.assertFalse(dropout.takes_native_dropout(0.0, True, 10))
        self.assertFalse(dropout.takes_native_dropout(1.0, True, 10))
        self.assertFalse(dropout.takes_native_dropout(0.1, True, 0))

    def test_scale(self):
        self.assertAlmostEqual(dropout.scale(0.2), 1.25)


class Buffers(unittest.TestCase):
    def test_forward_keeps_a_one_byte_mask(self):
        x = torch.empty(3, 5, 7, device="meta")
        output, mask = dropout.native_dropout_buffers(x)
        self.assertEqual(mask.dtype, torch.bool)
        self.assertEqual(mask.untyped_storage().nbytes(), x.numel())
        self.assertEqual((output.dtype, output.shape), (x.dtype, x.shape))

    def test_forward_allocates_the_mask_first(self):
        x = torch.empty(8, 4, device="meta", dtype=torch.bfloat16)
        with _Allocations() as seen:
            dropout.native_dropout_buffers(x)
        self.assertEqual(seen.dtypes, [torch.bool, torch.bfloat16])

    def test_forward_keeps_the_input_strides(self):
        x = torch.empty(2, 3, 4, 5, device="meta").to(memory_format=torch.channels_last)
        output, mask = dropout.native_dropout_buffers(x)
        self.assertEqual(output.stride(), x.stride())
        self.assertEqual(mask.stride(), x.stride())

    def test_backward_allocates_one_gradient_in_the_suggested_format(self):
        grad = torch.empty(2, 3, 4, 5, device="meta").to(memory_format=torch.channels_last)
        with _Allocations() as seen:
            out = dropout.native_dropout_backward_buffer(grad)
        self.assertEqual(seen.dtypes, [torch.float32])
        self.assertTrue(out.is_contiguous(memory_format=torch.channels_last))


if __name__ == "__main__":
    unittest.main()
