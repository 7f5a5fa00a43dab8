"""Unit tests of xmem_gpu.reduce, the staging of a GPU's sum and mean (run by
tests/integration/106-fast-exact-cuda-kernels.sh with a torch 2.x Python; meta tensors stand
for device tensors). Sizes from torch 2.6's setReduceConfig, worked by hand in
docs/cuda-semantics.md section 9; the first is a real GPU's (tests/groundtruth/snapshots)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../daemon/profiler/python"))
import torch  # noqa: E402

from xmem_gpu import reduce  # noqa: E402
from xmem_gpu.index_put import ALLOC, FREE  # noqa: E402

F32 = torch.float32
A100, RTX3060 = (108, 2048), (28, 1536)


def meta(*shape, dtype=F32):
    return torch.empty(*shape, dtype=dtype, device="meta")


class Buffers(unittest.TestCase):
    def test_full_sum_as_the_gpu_did(self):
        """cs336's output.sum() of 2^19 fp32 values: 64 blocks, 256 B and 4 B on the GPU."""
        self.assertEqual(reduce.buffers(meta(8, 4096, 16), [], F32, *A100), [256, 4])

    def test_bias_gradients(self):
        """The column sum of [N, C] (a bias gradient): 4 B x C x blocks x 32 x 4."""
        for c, want in ((768, 10223616), (1024, 13631488), (3072, 40894464), (4096, 54525952)):
            self.assertEqual(reduce.buffers(meta(1664, c), [0], F32, *A100)[0], want, c)
        self.assertEqual(reduce.buffers(meta(8192, 768), [0], F32, *A100)[0], 50331648)
        # fewer multiprocessors cap the blocks a column: 14 on an RTX 3060 against 26
        self.assertEqual(reduce.buffers(meta(1664, 3072), [0], F32, *RTX3060), [22020096, 96])
        # a [B, T, H] gradient summed over B and T is the same column sum
        self.assertEqual(reduce.buffers(meta(13, 128, 768), [0, 1], F32, *A100), [10223616, 24])

    def test_no_staging(self):
        """Row sums, a short column, an expanded gradient, nothing known about the GPU."""
        self.assertEqual(reduce.buffers(meta(1664, 768), [1], F32, *A100), [])
        self.assertEqual(reduce.buffers(meta(1664, 50257), [1], F32, *A100), [])
        self.assertEqual(reduce.buffers(meta(13, 8 * 128 * 128), [0], F32, *A100), [])
        self.assertEqual(reduce.buffers(meta(1024, 256).expand(1024, 256).as_strided(
            (1024, 256), (0, 0)), [0], F32, *A100), [])
        self.assertEqual(reduce.buffers(meta(1664, 768), [0], F32, None, 2048), [])

    def test_accumulator_size(self):
        """Half and bfloat16 accumulate in float, integers in int64, double in double."""
        base = reduce.buffers(meta(1664, 768), [0], F32, *A100)[0]
        self.assertEqual(reduce.buffers(meta(1664, 768, dtype=torch.bfloat16), [0], F32, *A100)[0],
                         base)
        self.assertEqual(reduce.buffers(meta(1664, 768, dtype=torch.float64), [0], torch.float64,
                                        *A100)[0], 2 * base)


class Program(unittest.TestCase):
    def setUp(self):
        self.saved = os.environ.pop("XMEM_GPU_MULTIPROCESSORS", None)

    def tearDown(self):
        if self.saved is not None:
            os.environ["XMEM_GPU_MULTIPROCESSORS"] = self.saved

    def test_steps_after_the_output(self):
        """Staging, then semaphores; the semaphores freed first; nothing without a count."""
        x, out = meta(1664, 768), meta(768)
        self.assertEqual(reduce.program(out, x, [0]), [])
        os.environ["XMEM_GPU_MULTIPROCESSORS"] = "108"
        self.assertEqual(reduce.program(out, x, [0], True), [
            (ALLOC, "staging", (10223616,), torch.uint8), (ALLOC, "semaphores", (24,), torch.uint8),
            (FREE, "semaphores"), (FREE, "staging")])
        self.assertEqual(reduce.program(meta(()), meta(8, 4096, 16))[0][2], (256,))


if __name__ == "__main__":
    unittest.main()
