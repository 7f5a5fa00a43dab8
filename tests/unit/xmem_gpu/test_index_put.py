"""Unit tests of xmem_gpu.index_put, the sort temporaries of a GPU's index_put_ with
accumulate (run by tests/integration/106-fast-exact-cuda-kernels.sh with a torch 2.x Python;
meta tensors stand for device tensors)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../daemon/profiler/python"))
import torch  # noqa: E402

from xmem_gpu import index_put  # noqa: E402
from xmem_gpu.index_put import ALLOC, FREE  # noqa: E402

L = torch.int64


def meta(*shape, dtype=torch.float32):
    return torch.empty(*shape, dtype=dtype, device="meta")


def live_peak(steps):
    """(peak bytes, bytes live after the last step) of STEPS."""
    sizes, live, peak = {}, 0, 0
    for step in steps:
        if step[0] == ALLOC:
            n = torch.Size(step[2]).numel() * torch.empty((), dtype=step[3]).element_size()
            sizes[step[1]] = n
            live += n
            peak = max(peak, live)
        else:
            live -= sizes.pop(step[1])
    return peak, live


class Program(unittest.TestCase):
    def test_index_backward(self):
        """IndexBackward0 of x[idx]: unsafe, one int64 index of N rows into [V, H]."""
        n = 100
        steps = index_put.program(meta(50, 8), [meta(n, dtype=L)], meta(n, 8), True, unsafe=True)
        self.assertEqual(steps, [
            (ALLOC, "remainder0", (n,), L), (ALLOC, "index0", (n,), L), (FREE, "remainder0"),
            (ALLOC, "sorted", (n,), L), (ALLOC, "orig", (n,), L), (ALLOC, "range", (n,), L),
            (ALLOC, "cub", (16 * n,), torch.uint8), (FREE, "cub"), (FREE, "range"),
            (FREE, "orig"), (FREE, "sorted"), (FREE, "index0")])
        self.assertEqual(live_peak(steps), (8 * n * 4 + 16 * n, 0))

    def test_without_accumulate_no_sort(self):
        self.assertEqual(index_put.program(meta(50, 8), [meta(10, dtype=L)], meta(10, 8), False), [])

    def test_deterministic_algorithms_sort_without_accumulate(self):
        torch.use_deterministic_algorithms(True)
        try:
            self.assertTrue(index_put.program(meta(50, 8), [meta(10, dtype=L)], meta(10, 8), False))
        finally:
            torch.use_deterministic_algorithms(False)

    def test_a_boolean_mask_is_left_out(self):
        mask = meta(50, dtype=torch.bool)
        self.assertEqual(index_put.program(meta(50, 8), [mask], meta(1, 8), True), [])

    def test_range_checks_and_int32_conversion(self):
        steps = index_put.program(meta(50, 8), [meta(10, dtype=torch.int32)], meta(10, 8), True)
        self.assertEqual(steps[:5], [(ALLOC, "long0", (10,), L), (ALLOC, "max", (), L),
                                     (FREE, "max"), (ALLOC, "min", (), L), (FREE, "min")])
        self.assertIn((FREE, "long0"), steps[:10])
        self.assertEqual(live_peak(steps)[1], 0)

    def test_a_broadcast_value_is_made_contiguous(self):
        steps = index_put.program(meta(6, 50, 8), [None, meta(10, dtype=L)], meta(()), True,
                                  unsafe=True)
        self.assertIn((ALLOC, "value", (6 * 10 * 8,), torch.float32), steps)

    def test_two_broadcast_indices(self):
        rows, cols = meta(10, 1, dtype=L), meta(1, 7, dtype=L)
        steps = index_put.program(meta(50, 40), [rows, cols], meta(10, 7), True, unsafe=True)
        allocs = [s for s in steps if s[0] == ALLOC]
        self.assertEqual([s[1] for s in allocs],
                         ["remainder0", "index0", "remainder1", "index1", "sorted", "orig",
                          "range", "cub"])
        self.assertTrue(all(s[2] == (10, 7) for s in allocs[:4]))
        self.assertEqual(live_peak(steps)[1], 0)

    def test_non_adjacent_indices_copy_the_permuted_self(self):
        i = meta(5, dtype=L)
        steps = index_put.program(meta(4, 3, 6), [i, None, i], meta(5, 3), True, unsafe=True)
        self.assertIn((ALLOC, "src", (4, 3, 6), torch.float32), steps)

    def test_a_non_contiguous_self_is_copied(self):
        self_ = meta(8, 50).t()
        steps = index_put.program(self_, [meta(10, dtype=L)], meta(10, 8), True, unsafe=True)
        self.assertEqual(steps[0], (ALLOC, "self", (50, 8), torch.float32))


class Run(unittest.TestCase):
    def test_frees_drop_the_tensor_and_call_back(self):
        made, freed = [], []

        def allocate(shape, dtype):
            made.append(torch.empty(shape, dtype=dtype, device="meta"))
            return made[-1]
        index_put.run([(ALLOC, "a", (3,), L), (ALLOC, "b", (2,), L), (FREE, "a"), (FREE, "b")],
                      allocate, lambda: freed.append(1))
        self.assertEqual((len(made), len(freed)), (2, 2))


if __name__ == "__main__":
    unittest.main()
