"""Unit tests of xmem_gpu.sdpa.choose_backend (run by tests/integration/90-fast-torch2-sdpa-rules.sh
with a torch 2.x Python; no GPU needed: meta tensors stand for the inputs)."""
import inspect
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../daemon/profiler/python"))
import torch  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from xmem_gpu import sdpa, target  # noqa: E402


def qkv(b=2, h=4, t=128, d=64, dtype=torch.bfloat16, kv_heads=None, kv_t=None, grad=False):
    q = torch.empty(b, h, t, d, dtype=dtype, device="meta", requires_grad=grad)
    k = torch.empty(b, kv_heads or h, kv_t or t, d, dtype=dtype, device="meta")
    return q, k, k


def choose(*tensors, **kw):
    return sdpa.choose_backend(*tensors, **kw)[0]


class Priority(unittest.TestCase):
    def test_sm80_bf16_takes_flash(self):
        self.assertEqual(choose(*qkv()), "flash")

    def test_sm75_bf16_has_only_math(self):
        name, why = sdpa.choose_backend(*qkv(), capability=(7, 5))
        self.assertEqual(name, "math")
        self.assertIn("sm75", why)

    def test_sm75_fp16_takes_efficient(self):
        self.assertEqual(choose(*qkv(dtype=torch.float16), capability=(7, 5)), "efficient")

    def test_fp32_takes_efficient_with_or_without_mask(self):
        q, k, v = qkv(dtype=torch.float32)
        mask = torch.empty(128, 128, dtype=torch.bool, device="meta")
        self.assertEqual(choose(q, k, v), "efficient")
        self.assertEqual(choose(q, k, v, attn_mask=mask), "efficient")

    def test_mask_passes_flash_over(self):
        mask = torch.empty(2, 1, 128, 128, dtype=torch.bfloat16, device="meta")
        name, why = sdpa.choose_backend(*qkv(), attn_mask=mask)
        self.assertEqual(name, "efficient")
        self.assertIn("flash: takes no attn_mask", why)

    def test_cudnn_first_on_hopper_unless_deprioritized(self):
        if not torch.backends.cudnn.is_available() or torch.backends.cudnn.version() < 90900:
            self.skipTest("this torch ships a cuDNN older than 9.9")
        self.assertEqual(choose(*qkv(), capability=(9, 0)), "cudnn")
        self.assertEqual(choose(*qkv(), capability=(8, 9)), "flash")
        with mock.patch.dict(os.environ, {"TORCH_CUDNN_SDPA_DEPRIORITIZED": "1"}):
            self.assertEqual(choose(*qkv(), capability=(9, 0)), "flash")
        self.assertEqual(choose(*qkv(dtype=torch.float32), capability=(9, 0)), "efficient")


class Flags(unittest.TestCase):
    def test_sdpa_kernel_restricts_backends(self):
        with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
            self.assertEqual(choose(*qkv()), "efficient")
        with sdpa_kernel([SDPBackend.MATH]):
            self.assertEqual(choose(*qkv()), "math")
        self.assertEqual(choose(*qkv()), "flash")

    def test_enable_flags(self):
        torch.backends.cuda.enable_flash_sdp(False)
        try:
            self.assertEqual(choose(*qkv()), "efficient")
        finally:
            torch.backends.cuda.enable_flash_sdp(True)

    @unittest.skipUnless("set_priority" in inspect.signature(sdpa_kernel).parameters,
                         "this torch's sdpa_kernel has no set_priority (2.4)")
    def test_set_priority(self):
        order = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION]
        with sdpa_kernel(order, set_priority=True):
            self.assertEqual(choose(*qkv()), "cudnn")

    def test_nothing_usable_raises(self):
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            with self.assertRaises(sdpa.NoKernel):
                choose(*qkv(dtype=torch.float32))


class Shapes(unittest.TestCase):
    def test_flash_head_dim_limit(self):
        self.assertEqual(choose(*qkv(d=72)), "flash")  # flash pads to a multiple of 8
        self.assertEqual(choose(*qkv(d=320)), "efficient")
        self.assertEqual(choose(*qkv(d=66)), "flash")
        self.assertEqual(choose(*qkv(d=66, dtype=torch.float32)), "math")  # 66 % 4 != 0

    def test_causal_needs_square_for_flash(self):
        self.assertEqual(choose(*qkv(kv_t=64), is_causal=True), "efficient")
        self.assertEqual(choose(*qkv(kv_t=64)), "flash")

    def test_gqa(self):
        q, k, v = qkv(h=8, kv_heads=2)
        self.assertEqual(choose(q, k, v, enable_gqa=True), "flash")
        with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
            self.assertEqual(choose(q, k, v, enable_gqa=True), "math")

    def test_sm86_training_head_dim(self):
        q, k, v = qkv(d=200, grad=True)
        self.assertEqual(choose(q, k, v, capability=(8, 6)), "efficient")
        self.assertEqual(choose(q, k, v, capability=(8, 0)), "flash")
        with torch.no_grad():
            self.assertEqual(choose(q, k, v, capability=(8, 6)), "flash")

    def test_unbatched_inputs_gain_a_batch_dim(self):
        q = torch.empty(4, 128, 64, dtype=torch.bfloat16, device="meta")
        self.assertEqual(choose(q, q, q), "flash")

    def test_last_dim_stride(self):
        q = torch.empty(2, 4, 64, 128, dtype=torch.bfloat16, device="meta").transpose(-1, -2)
        self.assertEqual(choose(q, q, q), "math")

    def test_efficient_offsets_on_sm80(self):
        base = torch.empty(2 * 4 * 128 * 64 + 1, dtype=torch.float32, device="meta")
        q = base[1:].view(2, 4, 128, 64)  # 4-byte offset
        self.assertEqual(choose(q, q, q), "math")
        self.assertEqual(choose(q, q, q, capability=(7, 5)), "efficient")


class Capability(unittest.TestCase):
    def test_env(self):
        self.assertEqual(target.capability({}), (8, 0))
        self.assertEqual(target.capability({"XMEM_GPU_CAPABILITY": "9.0"}), (9, 0))
        self.assertEqual(target.capability({"XMEM_GPU_CAPABILITY": "12.1"}), (12, 1))
        with self.assertRaisesRegex(ValueError, "^xmem: XMEM_GPU_CAPABILITY: invalid value"):
            target.capability({"XMEM_GPU_CAPABILITY": "sm80"})


if __name__ == "__main__":
    unittest.main()
